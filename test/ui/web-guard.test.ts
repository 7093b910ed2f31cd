// The dashboard's guard (src/ui/web-guard.ts), rule by rule: each refusal is a `forbidden` GoaldError and
// each allowed request passes only with everything right. The same rules over real HTTP against a real
// daemon: test/e2e/dashboard.test.ts.

import { describe, expect, it } from 'vitest';

import { GoaldError } from '../../src/errors.js';
import {
  checkHost,
  checkJsonPost,
  checkOrigin,
  guardRequest,
  readCookie,
  SECURITY_HEADERS,
  sessionCookie,
  SessionBook,
  sessionCookieName,
} from '../../src/ui/web-guard.js';

const PORT = 4321;
const SESSION_COOKIE = sessionCookieName(PORT);

function refusal(run: () => unknown): GoaldError {
  try {
    run();
  } catch (error) {
    if (error instanceof GoaldError) return error;
    throw error;
  }
  throw new Error('expected a refusal');
}

function loggedIn(book: SessionBook): string {
  return book.redeem(book.issueToken());
}

const POST_HEADERS = (session: string, host = `127.0.0.1:${PORT}`) => ({
  host,
  origin: `http://${host}`,
  'content-type': 'application/json',
  'x-goald-ui': '1',
  cookie: `${SESSION_COOKIE}=${session}`,
});

describe('web guard: Host (DNS rebinding)', () => {
  it.each([`127.0.0.1:${PORT}`, `localhost:${PORT}`, `LOCALHOST:${PORT}`])('accepts %s', (host) => {
    expect(checkHost({ host }, PORT)).toBe(host.toLowerCase());
  });
  it.each([undefined, 'evil.example', `evil.example:${PORT}`, `127.0.0.1:${PORT + 1}`, '127.0.0.1', `[::1]:${PORT}`, `0.0.0.0:${PORT}`, `127.0.0.1:${PORT}.evil.example`])(
    'refuses %s',
    (host) => {
      expect(refusal(() => checkHost(host === undefined ? {} : { host }, PORT)).code).toBe('forbidden');
    },
  );
  it('refuses a repeated Host header', () => {
    expect(refusal(() => checkHost({ host: [`127.0.0.1:${PORT}`, `127.0.0.1:${PORT}`] }, PORT)).code).toBe('forbidden');
  });
});

describe('web guard: Origin on state-changing requests', () => {
  it('accepts only the exact origin of the host the request came to', () => {
    expect(() => checkOrigin({ origin: `http://127.0.0.1:${PORT}` }, `127.0.0.1:${PORT}`)).not.toThrow();
    for (const origin of [undefined, 'null', `https://127.0.0.1:${PORT}`, `http://localhost:${PORT}`, `http://127.0.0.1:${PORT}/`, 'http://evil.example']) {
      expect(refusal(() => checkOrigin(origin === undefined ? {} : { origin }, `127.0.0.1:${PORT}`)).code, String(origin)).toBe('forbidden');
    }
  });
});

describe('web guard: JSON POSTs with the custom header', () => {
  it('accepts application/json (with a charset) and X-Goald-UI: 1', () => {
    expect(() => checkJsonPost({ 'content-type': 'application/json; charset=utf-8', 'x-goald-ui': '1' })).not.toThrow();
  });
  it.each<[Record<string, string>, string]>([
    [{ 'x-goald-ui': '1' }, 'no content type'],
    [{ 'content-type': 'text/plain', 'x-goald-ui': '1' }, 'text/plain (a simple cross-site request)'],
    [{ 'content-type': 'application/x-www-form-urlencoded', 'x-goald-ui': '1' }, 'a form'],
    [{ 'content-type': 'multipart/form-data', 'x-goald-ui': '1' }, 'a multipart form'],
    [{ 'content-type': 'application/json' }, 'no custom header'],
    [{ 'content-type': 'application/json', 'x-goald-ui': '0' }, 'a wrong custom header'],
  ])('refuses %o (%s)', (headers) => {
    expect(refusal(() => checkJsonPost(headers)).code).toBe('forbidden');
  });
});

describe('web guard: one-time token and session cookie', () => {
  it('a token opens one session; its second use is refused', () => {
    const book = new SessionBook(PORT);
    const token = book.issueToken();
    const session = book.redeem(token);
    expect(() => book.checkSession({ cookie: `${SESSION_COOKIE}=${session}` })).not.toThrow();
    expect(refusal(() => book.redeem(token)).code).toBe('forbidden');
  });
  it('refuses a token never issued, a missing one and an expired one', () => {
    let now = 1_000;
    const book = new SessionBook(PORT, () => now);
    expect(refusal(() => book.redeem('made-up')).code).toBe('forbidden');
    expect(refusal(() => book.redeem(null)).code).toBe('forbidden');
    const token = book.issueToken();
    now += 10 * 60_000;
    expect(refusal(() => book.redeem(token)).code).toBe('forbidden');
  });
  it('refuses no cookie, a made-up cookie and another book\'s session', () => {
    const book = new SessionBook(PORT);
    const other = loggedIn(new SessionBook(PORT));
    const otherPort = new SessionBook(PORT + 1);
    const session = loggedIn(book);
    // The other port's cookie name with this book's session: not this dashboard's cookie.
    expect(() => otherPort.checkSession({ cookie: `${SESSION_COOKIE}=${session}` })).toThrow(GoaldError);
    for (const cookie of [undefined, `${SESSION_COOKIE}=made-up`, `${SESSION_COOKIE}=${other}`, `other=${session}`, `${sessionCookieName(PORT + 1)}=${session}`]) {
      expect(refusal(() => book.checkSession(cookie === undefined ? {} : { cookie })).code, String(cookie)).toBe('forbidden');
    }
  });
  it('the cookie is HttpOnly, SameSite=Strict, Path=/', () => {
    expect(sessionCookie(PORT, 'abc')).toBe(`goald_ui_${PORT}=abc; HttpOnly; SameSite=Strict; Path=/`);
    expect(readCookie({ cookie: `a=1; ${SESSION_COOKIE}=abc; b=2` }, SESSION_COOKIE)).toBe('abc');
  });
  it('tokens and sessions are long random strings, never repeated', () => {
    const book = new SessionBook(PORT);
    const tokens = new Set(Array.from({ length: 20 }, () => book.issueToken()));
    expect(tokens.size).toBe(20);
    for (const token of tokens) expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });
});

describe('web guard: every rule in order (guardRequest)', () => {
  const query = new URLSearchParams();
  it('a login redeems the token after the Host check', () => {
    const book = new SessionBook(PORT);
    const token = book.issueToken();
    expect(refusal(() => guardRequest({ method: 'GET', path: '/login', query: new URLSearchParams({ token }), headers: { host: 'evil.example' } }, PORT, book)).code).toBe('forbidden');
    // The refused login did not burn the token.
    const decision = guardRequest({ method: 'GET', path: '/login', query: new URLSearchParams({ token }), headers: { host: `127.0.0.1:${PORT}` } }, PORT, book);
    expect(decision.kind).toBe('login');
  });
  it('a GET needs the session; a POST also the Origin, JSON and the header', () => {
    const book = new SessionBook(PORT);
    const session = loggedIn(book);
    expect(guardRequest({ method: 'GET', path: '/api/goals', query, headers: { host: `localhost:${PORT}`, cookie: `${SESSION_COOKIE}=${session}` } }, PORT, book)).toEqual({ kind: 'serve', host: `localhost:${PORT}` });
    expect(guardRequest({ method: 'POST', path: '/api/goals/g/pause', query, headers: POST_HEADERS(session) }, PORT, book).kind).toBe('serve');
    for (const drop of ['origin', 'content-type', 'x-goald-ui', 'cookie'] as const) {
      const headers: Record<string, string> = { ...POST_HEADERS(session) };
      delete headers[drop];
      expect(refusal(() => guardRequest({ method: 'POST', path: '/api/goals/g/pause', query, headers }, PORT, book)).code, drop).toBe('forbidden');
    }
    // Any other method is state-changing too.
    expect(refusal(() => guardRequest({ method: 'DELETE', path: '/api/goals/g', query, headers: { host: `127.0.0.1:${PORT}`, cookie: `${SESSION_COOKIE}=${session}` } }, PORT, book)).code).toBe('forbidden');
  });
});

describe('web guard: response headers', () => {
  it('a strict CSP with no inline script and no framing, nosniff, and no CORS header', () => {
    const csp = SECURITY_HEADERS['Content-Security-Policy'] ?? '';
    expect(csp).toContain("default-src 'self'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).not.toContain('unsafe-eval');
    expect(SECURITY_HEADERS['X-Content-Type-Options']).toBe('nosniff');
    expect(Object.keys(SECURITY_HEADERS).filter((name) => name.toLowerCase().startsWith('access-control-'))).toEqual([]);
  });
});
