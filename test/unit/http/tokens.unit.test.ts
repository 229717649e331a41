import { createHmac } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { HttpProblem } from '../../../src/adapters/http/problem.js';
import { IAT_CLOCK_TOLERANCE_SECONDS, JwtTokens } from '../../../src/adapters/http/tokens.js';

const SECRET = 'unit-test-secret-unit-test-secret-0123';

describe('JwtTokens', () => {
  it('answers a token verified before from memory, with the same principal', async () => {
    const tokens = new JwtTokens(SECRET);
    const token = await tokens.sign({ userId: 'alice', role: 'user' });
    const first = await tokens.verify(`Bearer ${token}`);
    const second = await tokens.verify(`Bearer ${token}`);
    expect(second).toEqual(first);
    expect(second).toEqual({ userId: 'alice', role: 'user' });
  });

  it('keeps at most 10,000 verified tokens in memory, however many buyers come', async () => {
    const tokens = new JwtTokens(SECRET);
    const signer = new JwtTokens(SECRET, {}, 0);
    for (let i = 0; i < 12_000; i += 1)
      tokens.verifySync(`Bearer ${await signer.sign({ userId: `buyer-${i}`, role: 'user' })}`);
    expect(tokens.remembered).toBe(10_000);
  });

  it("refuses a token whose signature's last character is changed, even where the bytes it spells are the same", async () => {
    const tokens = new JwtTokens(SECRET);
    const token = await tokens.sign({ userId: 'mallory', role: 'user' });
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const last = token.at(-1)!;
    // the signature's 32 bytes take 43 characters: the last one carries 4 bits and 2 unused ones
    const sameBytes = [...alphabet].filter(
      (c) => c !== last && Math.floor(alphabet.indexOf(c) / 4) === Math.floor(alphabet.indexOf(last) / 4),
    );
    expect(sameBytes).toHaveLength(3);
    for (const c of sameBytes) {
      const respelled = `${token.slice(0, -1)}${c}`;
      const refused = await tokens.verify(`Bearer ${respelled}`).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(HttpProblem);
      expect((refused as HttpProblem).code).toBe('INVALID_TOKEN');
    }
    expect(await tokens.verify(`Bearer ${token}`)).toEqual({ userId: 'mallory', role: 'user' });
  });

  it('refuses a remembered token once its exp has passed', async () => {
    const tokens = new JwtTokens(SECRET);
    const token = await tokens.sign({ userId: 'bob', role: 'admin' }, 1);
    expect(await tokens.verify(`Bearer ${token}`)).toEqual({ userId: 'bob', role: 'admin' });
    const exp = (JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as { exp: number })
      .exp;
    while (Date.now() <= exp * 1000)
      await new Promise((resolve) => setTimeout(resolve, exp * 1000 - Date.now() + 5));
    const refused = await tokens.verify(`Bearer ${token}`).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(HttpProblem);
    expect((refused as HttpProblem).code).toBe('TOKEN_EXPIRED');
  });

  it('never remembers a token it refused', async () => {
    const tokens = new JwtTokens(SECRET);
    const forged = await new JwtTokens('another-secret-another-secret-0123456').sign({
      userId: 'eve',
      role: 'admin',
    });
    for (let i = 0; i < 2; i += 1) {
      const refused = await tokens.verify(`Bearer ${forged}`).catch((error: unknown) => error);
      expect((refused as HttpProblem).code).toBe('INVALID_TOKEN');
    }
  });
});

const now = (): number => Math.floor(Date.now() / 1000);

/** A token with exactly these claims, HS256-signed with `secret` (no signer to refuse odd claims). */
const craft = (claims: Record<string, unknown>, secret = SECRET, alg = 'HS256'): string => {
  const input = `${b64url({ alg, typ: 'JWT' })}.${b64url(claims)}`;
  return `${input}.${createHmac('sha256', secret).update(input).digest('base64url')}`;
};
const b64url = (value: object): string => Buffer.from(JSON.stringify(value)).toString('base64url');
const claimsOf = (token: string): Record<string, unknown> =>
  JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString()) as Record<string, unknown>;

/** The refusal `verify` answers with: its code and detail. */
const refusal = async (
  tokens: JwtTokens,
  token: string,
): Promise<{ status: number; code: string; detail: string }> => {
  const error = await tokens.verify(`Bearer ${token}`).then(
    () => new Error('accepted'),
    (e: unknown) => e,
  );
  if (!(error instanceof HttpProblem)) throw new Error(`expected a 401 problem, got ${String(error)}`);
  return { status: error.status, code: error.code, detail: error.detail };
};

describe('JwtTokens: the Bearer scheme', () => {
  it('takes the scheme in any case, as RFC 9110 says', async () => {
    const tokens = new JwtTokens(SECRET);
    const token = await tokens.sign({ userId: 'carol', role: 'user' });
    for (const scheme of ['Bearer', 'bearer', 'BEARER', 'bEaReR'])
      expect(await tokens.verify(`${scheme} ${token}`)).toEqual({ userId: 'carol', role: 'user' });
  });

  it('still refuses another scheme, or a token without one', async () => {
    const tokens = new JwtTokens(SECRET);
    const token = await tokens.sign({ userId: 'carol', role: 'user' });
    for (const header of [`Basic ${token}`, token, `Bearer${token}`]) {
      const refused = await tokens.verify(header).catch((e: unknown) => e);
      expect((refused as HttpProblem).code).toBe('INVALID_TOKEN');
    }
  });
});

describe('JwtTokens: the longest lifetime', () => {
  const policy = { maxTtlSeconds: 3_600 };

  it('refuses a token whose exp is in year 33,000, every time it is shown (it is never remembered)', async () => {
    const tokens = new JwtTokens(SECRET, policy);
    const forever = craft({ sub: 'mallory', role: 'admin', iat: now(), exp: 31_536_000_000 });
    for (let shown = 0; shown < 3; shown += 1)
      expect(await refusal(tokens, forever)).toEqual({
        status: 401,
        code: 'INVALID_TOKEN',
        detail: 'the token lives longer than the 3600 s this service accepts',
      });
  });

  it('counts the lifetime from iat: exactly the maximum passes, a second more does not', async () => {
    const tokens = new JwtTokens(SECRET, policy);
    const iat = now() - 10;
    expect(await tokens.verify(`Bearer ${craft({ sub: 'a', role: 'user', iat, exp: iat + 3_600 })}`)).toEqual(
      {
        userId: 'a',
        role: 'user',
      },
    );
    expect((await refusal(tokens, craft({ sub: 'b', role: 'user', iat, exp: iat + 3_601 }))).code).toBe(
      'INVALID_TOKEN',
    );
  });

  it('refuses a token issued long ago that is still valid for a while, when the whole exceeds the maximum', async () => {
    const tokens = new JwtTokens(SECRET, policy);
    const token = craft({ sub: 'old', role: 'user', iat: now() - 3_000, exp: now() + 1_000 });
    expect((await refusal(tokens, token)).detail).toContain('lives longer');
  });

  it('counts from now when the token has no iat', async () => {
    const tokens = new JwtTokens(SECRET, policy);
    expect(await tokens.verify(`Bearer ${craft({ sub: 'a', role: 'user', exp: now() + 3_000 })}`)).toEqual({
      userId: 'a',
      role: 'user',
    });
    expect((await refusal(tokens, craft({ sub: 'a', role: 'user', exp: now() + 4_000 }))).detail).toContain(
      'lives longer',
    );
  });

  it('defaults to a day', async () => {
    const tokens = new JwtTokens(SECRET);
    expect(tokens.policy.maxTtlSeconds).toBe(86_400);
    const iat = now();
    expect((await refusal(tokens, craft({ sub: 'a', role: 'user', iat, exp: iat + 86_401 }))).code).toBe(
      'INVALID_TOKEN',
    );
  });

  it('will not sign a token that lives longer than the maximum', async () => {
    const tokens = new JwtTokens(SECRET, policy);
    await expect(tokens.sign({ userId: 'a', role: 'user' }, 3_601)).rejects.toThrow(
      /at most 3600 s \(SECKILL_JWT_MAX_TTL_SECONDS\)/,
    );
    const token = await tokens.sign({ userId: 'a', role: 'user' });
    const { iat, exp } = claimsOf(token) as { iat: number; exp: number };
    expect(exp - iat).toBeLessThanOrEqual(3_600);
  });
});

describe('JwtTokens: iat', () => {
  it(`refuses a token issued more than ${IAT_CLOCK_TOLERANCE_SECONDS} s in the future, and takes one within that`, async () => {
    const tokens = new JwtTokens(SECRET);
    const ahead = (seconds: number) =>
      craft({ sub: 'a', role: 'user', iat: now() + seconds, exp: now() + 600 });
    expect(await refusal(tokens, ahead(60))).toEqual({
      status: 401,
      code: 'INVALID_TOKEN',
      detail: 'the token was issued in the future',
    });
    expect(await tokens.verify(`Bearer ${ahead(2)}`)).toEqual({ userId: 'a', role: 'user' });
  });

  it('refuses an iat that is not a number', async () => {
    const tokens = new JwtTokens(SECRET);
    const token = craft({ sub: 'a', role: 'user', iat: String(now()), exp: now() + 600 });
    expect((await refusal(tokens, token)).detail).toBe('the token has no valid issue time');
  });
});

describe('JwtTokens: issuer and audience', () => {
  const policy = { issuer: 'https://auth.example', audience: 'seckill' };
  const claims = (extra: Record<string, unknown>) => ({
    sub: 'a',
    role: 'user',
    iat: now(),
    exp: now() + 600,
    ...extra,
  });

  it('signs with them, and takes what it signed', async () => {
    const tokens = new JwtTokens(SECRET, policy);
    const token = await tokens.sign({ userId: 'a', role: 'user' });
    expect(claimsOf(token)).toMatchObject({ iss: 'https://auth.example', aud: 'seckill' });
    expect(await tokens.verify(`Bearer ${token}`)).toEqual({ userId: 'a', role: 'user' });
  });

  it('refuses a token without them, or with others', async () => {
    const tokens = new JwtTokens(SECRET, policy);
    for (const extra of [
      {},
      { iss: 'https://auth.example' },
      { aud: 'seckill' },
      { iss: 'https://evil.example', aud: 'seckill' },
      { iss: 'https://auth.example', aud: 'another-service' },
      { iss: 'https://auth.example', aud: ['another-service'] },
      { iss: ['https://auth.example'], aud: 'seckill' },
    ])
      expect({ extra, code: (await refusal(tokens, craft(claims(extra)))).code }).toEqual({
        extra,
        code: 'INVALID_TOKEN',
      });
  });

  it('takes an aud list that names this service', async () => {
    const tokens = new JwtTokens(SECRET, policy);
    const token = craft(claims({ iss: 'https://auth.example', aud: ['billing', 'seckill'] }));
    expect(await tokens.verify(`Bearer ${token}`)).toEqual({ userId: 'a', role: 'user' });
  });

  it('ignores them when none is configured', async () => {
    const tokens = new JwtTokens(SECRET);
    const token = craft(claims({ iss: 'anyone', aud: 'anything' }));
    expect(await tokens.verify(`Bearer ${token}`)).toEqual({ userId: 'a', role: 'user' });
  });
});

describe('JwtTokens: forged tokens', () => {
  it('refuses alg none, another algorithm and another key', async () => {
    const tokens = new JwtTokens(SECRET);
    const claims = { sub: 'root', role: 'admin', iat: now(), exp: now() + 600 };
    const unsigned = `${b64url({ alg: 'none', typ: 'JWT' })}.${b64url(claims)}.`;
    for (const token of [
      unsigned,
      craft(claims, SECRET, 'HS512'),
      craft(claims, 'another-secret-another-secret-0123456'),
    ])
      expect((await refusal(tokens, token)).code).toBe('INVALID_TOKEN');
  });
});
