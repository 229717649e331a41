import express from 'express';
import { z } from 'zod';
import type { RouteContext } from '../dependencies.js';
import { addressBudget } from '../middleware/admission.js';
import { jsonBody, parse, requireJson } from '../middleware/input.js';
import { USER_ID } from '../tokens.js';

/** How long a development login's token lives: a demo's sitting. */
const DEV_TOKEN_TTL_SECONDS = 3_600;

const DevLoginBody = z.strictObject({
  userId: z.string().regex(USER_ID, 'userId must be 1 to 64 letters, digits or _ . : @ -'),
});

/**
 * `POST /api/v1/dev/login {userId}` → 201 `{userId, token, expiresAt}`: a buyer's token for anyone who asks,
 * for the buyer's page of a demo. It exists only where tokens are signed with the public development secret,
 * which anyone can sign with anyway, and where the service therefore listens on this machine alone
 * (config.ts); a deployment with a secret of its own has no such route (404), and its buyers bring a token
 * from their identity provider. Never an admin token.
 */
export const devLoginRouter = (ctx: RouteContext): express.Router => {
  const router = express.Router();
  if (!ctx.devLogin) return router;
  router.post(
    '/dev/login',
    addressBudget(ctx.budgets.pathAddress, 'development logins'),
    requireJson,
    jsonBody,
    async (req, res) => {
      const { userId } = parse(DevLoginBody, req.body, 'body');
      const token = await ctx.tokens.sign({ userId, role: 'user' }, DEV_TOKEN_TTL_SECONDS);
      const expiresAt = new Date(Date.now() + DEV_TOKEN_TTL_SECONDS * 1000).toISOString();
      res.status(201).set('Cache-Control', 'no-store').json({ userId, token, expiresAt });
    },
  );
  return router;
};
