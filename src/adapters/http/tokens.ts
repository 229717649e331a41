import { createSigner, createVerifier, TokenError } from 'fast-jwt';
import { HttpProblem } from './problem.js';

export type Role = 'user' | 'admin';
export type Principal = Readonly<{ userId: string; role: Role }>;

/** What a token must be to be accepted, beyond its signature (docs/api.md, "Tokens"). */
export type TokenPolicy = Readonly<{
  /** the longest lifetime a token may have: exp − iat, or exp − now when it has no iat */
  maxTtlSeconds: number;
  /** when set, every token must carry this `iss`, and tokens are signed with it */
  issuer: string | null;
  /** when set, every token must carry this `aud`, and tokens are signed with it */
  audience: string | null;
}>;

export const DEFAULT_TOKEN_POLICY: TokenPolicy = { maxTtlSeconds: 86_400, issuer: null, audience: null };

/** how far ahead of this process's clock a token's `iat` may be: the clock of whoever signed it may run fast */
export const IAT_CLOCK_TOLERANCE_SECONDS = 5;

/** how long a token lives when no lifetime is asked for (at most the policy's maximum) */
const DEFAULT_TTL_SECONDS = 3_600;

/**
 * Verified tokens kept in memory, about 400 bytes each: the buyers clicking right now (a flood's repeat
 * clicks come within seconds). 100,000 kept 40 MB of a flood of fresh buyers alive after the flood was over.
 */
const VERIFIED_TOKENS_KEPT = 10_000;

/** What a token's subject may be: the user ids the service accepts. */
export const USER_ID = /^[A-Za-z0-9_.:@-]{1,64}$/;

/** The scheme is case-insensitive (RFC 9110 §11.1): `bearer x` is `Bearer x`. */
const BEARER = /^Bearer ([A-Za-z0-9_\-.]+)$/i;

/**
 * HS256 bearer tokens: `sub` is the user id, `role` is user or admin, `exp` is honoured, the lifetime is
 * bounded, `iat` is not in the future, and `iss`/`aud` are the configured ones when set.
 */
export class JwtTokens {
  readonly policy: TokenPolicy;
  private readonly key: Buffer;
  /** fast-jwt's synchronous HS256 check: an HMAC and a JSON parse, no promise per token */
  private readonly verifier: (token: string) => Record<string, unknown>;
  private readonly verified = new Map<string, { principal: Principal; expiresAtMs: number }>();

  constructor(
    secret: string,
    policy: Partial<TokenPolicy> = {},
    private readonly cacheSize = VERIFIED_TOKENS_KEPT,
  ) {
    this.policy = { ...DEFAULT_TOKEN_POLICY, ...policy };
    this.key = Buffer.from(secret, 'utf8');
    const { issuer, audience } = this.policy;
    // fast-jwt's maxAge counts from iat only (a token without iat, or with exp in year 33,000, passes it), and
    // it accepts an iat in the future: both are checked in check() instead
    this.verifier = createVerifier({
      key: this.key,
      algorithms: ['HS256'],
      requiredClaims: ['sub', 'exp', ...(issuer ? ['iss'] : []), ...(audience ? ['aud'] : [])],
      ...(issuer ? { allowedIss: issuer } : {}),
      ...(audience ? { allowedAud: audience } : {}),
    });
  }

  /** A token for the principal, with the policy's `iss` and `aud`; a lifetime over the maximum is refused. */
  sign(
    principal: Principal,
    ttlSeconds = Math.min(DEFAULT_TTL_SECONDS, this.policy.maxTtlSeconds),
  ): Promise<string> {
    if (ttlSeconds > this.policy.maxTtlSeconds)
      return Promise.reject(
        new RangeError(
          `a token may live at most ${this.policy.maxTtlSeconds} s (SECKILL_JWT_MAX_TTL_SECONDS), not ${ttlSeconds} s`,
        ),
      );
    const { issuer, audience } = this.policy;
    const signer = createSigner({
      key: this.key,
      algorithm: 'HS256',
      sub: principal.userId,
      expiresIn: ttlSeconds * 1000,
      ...(issuer ? { iss: issuer } : {}),
      ...(audience ? { aud: audience } : {}),
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

  /** How many verified tokens are kept in memory now (at most the cache's size). */
  get remembered(): number {
    return this.verified.size;
  }

  /** `verify` without a promise (the order route's): throws the 401 problem. */
  verifySync(authorization: string | undefined): Principal {
    if (!authorization) throw unauthorized('MISSING_TOKEN', 'an Authorization: Bearer token is required');
    const match = BEARER.exec(authorization);
    if (!match?.[1]) throw unauthorized('INVALID_TOKEN', 'the Authorization header must be "Bearer <token>"');
    const token = match[1];
    const known = this.verified.get(token);
    if (known) {
      // the latest used last to go: a buyer clicking on stays in, a buyer gone leaves first
      this.verified.delete(token);
      if (known.expiresAtMs > Date.now()) {
        this.verified.set(token, known);
        return known.principal;
      }
    }
    const { expiresAtMs, ...principal } = this.check(token);
    this.remember(token, principal, expiresAtMs);
    return principal;
  }

  /**
   * A flash sale's flood is the same buyers clicking again and again: a token already verified is answered
   * from memory until its `exp`, which spares an HMAC per click. Only tokens that passed every check are kept
   * (so none lives in memory longer than the policy's maximum), at most `cacheSize`, the least recently used
   * going first.
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
    // base64url leaves the last character's low bits unused: a signature spelled otherwise is another token
    const signature = token.slice(token.lastIndexOf('.') + 1);
    if (Buffer.from(signature, 'base64url').toString('base64url') !== signature)
      throw unauthorized('INVALID_TOKEN', 'the token is not valid');
    let payload: Record<string, unknown>;
    try {
      payload = this.verifier(token);
    } catch (error) {
      if (error instanceof TokenError && error.code === TokenError.codes.expired)
        throw unauthorized('TOKEN_EXPIRED', 'the token has expired');
      if (error instanceof TokenError && CLAIM_ERRORS.has(error.code))
        throw unauthorized('INVALID_TOKEN', `the token's claims are refused: ${error.message}`);
      throw unauthorized('INVALID_TOKEN', 'the token is not valid');
    }
    const principal = principalOf(payload);
    const exp = expiryOf(payload, this.policy.maxTtlSeconds);
    return { ...principal, expiresAtMs: exp * 1000 };
  }
}

/** The verifier does not check the claims' types: a number or an array must not become a user id. */
const principalOf = ({ sub, role }: Record<string, unknown>): Principal => {
  if (typeof sub !== 'string' || !USER_ID.test(sub))
    throw unauthorized('INVALID_TOKEN', 'the token has no valid subject');
  if (role !== 'user' && role !== 'admin')
    throw unauthorized('INVALID_TOKEN', 'the token role must be user or admin');
  return { userId: sub, role };
};

/** `exp`, once the token's times are found sound: issued no later than now (give or take), living no longer than allowed. */
const expiryOf = ({ exp, iat }: Record<string, unknown>, maxTtlSeconds: number): number => {
  if (typeof exp !== 'number') throw unauthorized('INVALID_TOKEN', 'the token has no valid expiry');
  if (iat !== undefined && typeof iat !== 'number')
    throw unauthorized('INVALID_TOKEN', 'the token has no valid issue time');
  const nowSeconds = Date.now() / 1000;
  if (iat !== undefined && iat > nowSeconds + IAT_CLOCK_TOLERANCE_SECONDS)
    throw unauthorized('INVALID_TOKEN', 'the token was issued in the future');
  if (exp - (iat ?? nowSeconds) > maxTtlSeconds)
    throw unauthorized(
      'INVALID_TOKEN',
      `the token lives longer than the ${maxTtlSeconds} s this service accepts`,
    );
  return exp;
};

/** fast-jwt's refusals of a claim (a missing or unexpected `iss` or `aud`, a claim of the wrong type) */
const CLAIM_ERRORS = new Set<string>([
  TokenError.codes.missingRequiredClaim,
  TokenError.codes.invalidClaimValue,
  TokenError.codes.invalidClaimType,
]);

const unauthorized = (code: string, detail: string) =>
  new HttpProblem(401, code, detail, [], { 'WWW-Authenticate': `Bearer error="invalid_token"` });
