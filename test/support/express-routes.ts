import type express from 'express';

type Layer = {
  route?: { path: string; methods: Record<string, boolean> };
  rawPath?: string | RegExp | Array<string | RegExp>;
  handle?: { stack?: Layer[] };
};

/** Every route an express 5 app answers, as `METHOD /path/{param}`, found by walking its routers. */
export const routesOf = (app: express.Express): string[] => {
  const routes = new Set<string>();
  const walk = (stack: readonly Layer[], prefix: string) => {
    for (const layer of stack) {
      if (layer.route) {
        for (const [method, on] of Object.entries(layer.route.methods))
          if (on && method !== '_all')
            routes.add(`${method.toUpperCase()} ${(prefix + layer.route.path).replace(/:(\w+)/g, '{$1}')}`);
      } else if (layer.handle?.stack) {
        const mount = typeof layer.rawPath === 'string' && layer.rawPath !== '/' ? layer.rawPath : '';
        walk(layer.handle.stack, prefix + mount);
      }
    }
  };
  walk((app as unknown as { router: { stack: Layer[] } }).router.stack, '');
  return [...routes].sort();
};
