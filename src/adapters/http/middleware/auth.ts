import type { RequestHandler, Response } from 'express';
import { HttpProblem } from '../problem.js';
import type { JwtTokens, Principal } from '../tokens.js';
import { locals } from './tracking.js';

/** Checks the bearer token (and the role, when one is asked for) and leaves the principal for the route. */
export const authenticate =
  (tokens: JwtTokens, role?: 'admin'): RequestHandler =>
  async (req, res, next) => {
    try {
      const principal = await tokens.verify(req.get('authorization'));
      if (role && principal.role !== role)
        throw new HttpProblem(403, 'FORBIDDEN', 'this needs an admin token');
      locals(res).principal = principal;
      next();
    } catch (error) {
      next(error);
    }
  };

/** The caller, as `authenticate` found it. */
export const principalOf = (res: Response): Principal => {
  const principal = locals(res).principal;
  if (!principal) throw new HttpProblem(401, 'MISSING_TOKEN', 'an Authorization: Bearer token is required');
  return principal;
};
