import { createSigner, createVerifier, TokenError } from 'fast-jwt';
import { HttpProblem } from './problem.js';

export type Role = 'user' | 'admin';
export type Principal = Readonly<{ userId: string; role: Role }>;

const USER_ID = /^[A-Za-z0-9_.:@-]{1,64}$/;

/** HS256 bearer tokens: `sub` is the user id, `role` is user or admin, `exp` is honoured. */
export class JwtTokens {
  private readonly key: Buffer;
  /** fast-jwt's synchronous HS256 check: an HMAC and a JSON parse, no promise per token */
  private readonly verifier: (token: string) => Record<string, unknown>;
  private readonly verified = new Map<string, { principal: Principal; expiresAtMs: number }>();

  constructor(
    secret: string,
    private readonly cacheSize = 100_000,
  ) {
    this.key = Buffer.from(secret, 'utf8');
    this.verifier = createVerifier({ key: this.key, algorithms: ['HS256'], requiredClaims: ['sub', 'exp'] });
  }

  sign(principal: Principal, ttlSeconds = 3600): Promise<string> {
    const signer = createSigner({
      key: this.key,
      algorithm: 'HS256',
      sub: principal.userId,
      expiresIn: ttlSeconds * 1000,
    });
    return Promise.resolve(signer({ role: principal.role }));
  }

  verify(authorization: string | undefined): Promise<Principal> {
    try {
      return Promise.resolve(this.verifySync(authorization));
    } catch (error) {
      return Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
  }

  /** `verify` without a promise (the order route's): throws the 401 problem. */
  verifySync(authorization: string | undefined): Principal {
    if (!authorization) throw unauthorized('MISSING_TOKEN', 'an Authorization: Bearer token is required');
    const match = /^Bearer ([A-Za-z0-9_\-.]+)$/.exec(authorization);
    if (!match?.[1]) throw unauthorized('INVALID_TOKEN', 'the Authorization header must be "Bearer <token>"');
    const token = match[1];
    const known = this.verified.get(token);
    if (known && known.expiresAtMs > Date.now()) return known.principal;
    const { expiresAtMs, ...principal } = this.check(token);
    this.remember(token, principal, expiresAtMs);
    return principal;
  }

  /**
   * A flash sale's flood is the same buyers clicking again and again: a token already verified is answered
   * from memory until its `exp`, which spares an HMAC per click. Only valid tokens are kept, at most `cacheSize`.
   */
  private remember(token: string, principal: Principal, expiresAtMs: number): void {
    if (this.cacheSize === 0) return;
    if (this.verified.size >= this.cacheSize) {
      const oldest = this.verified.keys().next().value;
      if (oldest !== undefined) this.verified.delete(oldest);
    }
    this.verified.set(token, { principal, expiresAtMs });
  }

  private check(token: string): Principal & { expiresAtMs: number } {
    try {
      const payload = this.verifier(token);
      const role = payload['role'];
      // the verifier does not check the claims' types: a number or an array must not become a user id
      if (typeof payload['sub'] !== 'string' || !USER_ID.test(payload['sub']))
        throw unauthorized('INVALID_TOKEN', 'the token has no valid subject');
      if (role !== 'user' && role !== 'admin')
        throw unauthorized('INVALID_TOKEN', 'the token role must be user or admin');
      if (typeof payload['exp'] !== 'number')
        throw unauthorized('INVALID_TOKEN', 'the token has no valid expiry');
      return { userId: payload.sub, role, expiresAtMs: payload['exp'] * 1000 };
    } catch (error) {
      if (error instanceof HttpProblem) throw error;
      if (error instanceof TokenError && error.code === TokenError.codes.expired)
        throw unauthorized('TOKEN_EXPIRED', 'the token has expired');
      throw unauthorized('INVALID_TOKEN', 'the token is not valid');
    }
  }
}

const unauthorized = (code: string, detail: string) =>
  new HttpProblem(401, code, detail, [], { 'WWW-Authenticate': `Bearer error="invalid_token"` });
