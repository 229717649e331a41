/**
 * What checking a bearer token costs, in this process: `JwtTokens.verify` as the service runs it on every
 * order request, for a token it has not seen (the HS256 check through jose) and for one it has already
 * verified; next to the same HS256 check done with node:crypto directly.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { JwtTokens } from '../../src/adapters/http/tokens.js';

export type JwtCost = Readonly<{
  /** a token `JwtTokens` has not verified before */
  jwtVerifyMicros: number;
  /** the same tokens again (what a repeat click costs when the adapter remembers verified tokens) */
  jwtRepeatVerifyMicros: number;
  /** HS256 with node:crypto createHmac + timingSafeEqual, and the payload parsed */
  hmacVerifyMicros: number;
}>;

const microsPerCall = async (
  tokens: readonly string[],
  work: (token: string) => unknown,
): Promise<number> => {
  const started = performance.now();
  for (const token of tokens) await work(token);
  return Number((((performance.now() - started) * 1000) / tokens.length).toFixed(1));
};

const hmacVerifier = (secret: string) => {
  const key = Buffer.from(secret);
  return (token: string) => {
    const [head, payload, signature] = token.split('.');
    if (!head || !payload || !signature) throw new Error('not a JWT');
    const mac = createHmac('sha256', key).update(`${head}.${payload}`).digest();
    const given = Buffer.from(signature, 'base64url');
    if (mac.length !== given.length || !timingSafeEqual(mac, given)) throw new Error('bad signature');
    return JSON.parse(Buffer.from(payload, 'base64url').toString()) as unknown;
  };
};

/** `tokens`: distinct valid tokens signed with `secret`; the first half warms up, the second is measured. */
export const jwtCost = async (secret: string, tokens: readonly string[]): Promise<JwtCost> => {
  const half = Math.floor(tokens.length / 2);
  const warm = tokens.slice(0, half);
  const measured = tokens.slice(half);
  const bearer = (token: string) => `Bearer ${token}`;
  const hmac = hmacVerifier(secret);
  await microsPerCall(warm, (t) => new JwtTokens(secret).verify(bearer(t)));
  await microsPerCall(warm, hmac);
  const jwt = new JwtTokens(secret);
  return {
    jwtVerifyMicros: await microsPerCall(measured, (t) => jwt.verify(bearer(t))),
    jwtRepeatVerifyMicros: await microsPerCall(measured, (t) => jwt.verify(bearer(t))),
    hmacVerifyMicros: await microsPerCall(measured, hmac),
  };
};
