import { describe, expect, it } from '@jest/globals';
import { HttpProblem } from '../../../src/adapters/http/problem.js';
import { JwtTokens } from '../../../src/adapters/http/tokens.js';

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
