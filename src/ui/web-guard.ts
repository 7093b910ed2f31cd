// The dashboard's guard: the rules every request to `goald ui`'s web server passes before anything is read
// or done. The dashboard drives processes that run code, and any web page the user opens can send requests
// to 127.0.0.1, so nothing is trusted for being local:
// - the Host header must name this server (127.0.0.1:<port> or localhost:<port>): DNS rebinding;
// - a session comes only from a one-time token (printed by `goald ui`), exchanged once for an HttpOnly,
//   SameSite=Strict cookie; the token is burnt by its first use;
// - a state-changing request carries the exact Origin of this server, a JSON body (Content-Type
//   application/json) and the `X-Goald-UI: 1` header, which no cross-site form or simple request can send;
// - no CORS header is ever sent, and every response carries a strict CSP, nosniff and no framing.
// A refusal is a `forbidden` GoaldError (403 with the daemon's error envelope). Pure but for randomness.

import { createHash, randomBytes } from 'node:crypto';

import { GoaldError } from '../errors.js';

/** The custom header a dashboard POST carries (a cross-site request cannot set it without CORS). */
const UI_HEADER = 'x-goald-ui';
/** The session cookie's name: with the port, since cookies do not tell ports apart (two daemons, two dashboards). */
export function sessionCookieName(port: number): string {
  return `goald_ui_${port}`;
}

// A token printed by `goald ui` is good for this long: long enough to copy it into a browser by hand.
const TOKEN_TTL_MS = 10 * 60_000;
// Sessions kept at once; the oldest is forgotten first (a dashboard opened again gets a fresh one).
const MAX_SESSIONS = 32;
const MAX_PENDING_TOKENS = 32;

const HINT_NEW_TOKEN = 'run `goald ui` again for a fresh link';

/** Headers on every response of the dashboard, refusals included. */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'Content-Security-Policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
    "font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Resource-Policy': 'same-origin',
  'Cache-Control': 'no-store',
};

/** The request facts the guard reads (node's IncomingHttpHeaders fits). */
export type GuardHeaders = Readonly<Record<string, string | string[] | undefined>>;

function forbidden(message: string, hint: string): GoaldError {
  return new GoaldError('forbidden', message, hint);
}

function single(headers: GuardHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? undefined : value;
}

/** The Host values this server answers to. */
function allowedHosts(port: number): string[] {
  return [`127.0.0.1:${port}`, `localhost:${port}`];
}

/** Refuses a request whose Host header is not this server's (a rebound DNS name, another port). */
export function checkHost(headers: GuardHeaders, port: number): string {
  const host = single(headers, 'host')?.toLowerCase();
  if (host === undefined || !allowedHosts(port).includes(host)) {
    throw forbidden('the Host header does not name this dashboard', `open http://127.0.0.1:${port}/ (the address \`goald ui\` prints)`);
  }
  return host;
}

/** Refuses a state-changing request without this server's exact Origin (a cross-site request). */
export function checkOrigin(headers: GuardHeaders, host: string): void {
  const origin = single(headers, 'origin');
  if (origin !== `http://${host}`) {
    throw forbidden('a dashboard action must come from the dashboard itself (Origin)', 'use the dashboard page `goald ui` opens');
  }
}

/** Refuses a POST that is not JSON or lacks the dashboard's custom header. */
export function checkJsonPost(headers: GuardHeaders): void {
  const type = single(headers, 'content-type')?.split(';')[0]?.trim().toLowerCase();
  if (type !== 'application/json') {
    throw forbidden('a dashboard action must be a JSON request (Content-Type: application/json)', 'use the dashboard page `goald ui` opens');
  }
  if (single(headers, UI_HEADER) !== '1') {
    throw forbidden(`a dashboard action must carry the ${UI_HEADER} header`, 'use the dashboard page `goald ui` opens');
  }
}

/** The value of one cookie in a Cookie header, or undefined. */
export function readCookie(headers: GuardHeaders, name: string): string | undefined {
  const header = single(headers, 'cookie');
  if (header === undefined) return undefined;
  for (const part of header.split(';')) {
    const at = part.indexOf('=');
    if (at > 0 && part.slice(0, at).trim() === name) return part.slice(at + 1).trim();
  }
  return undefined;
}

/** The Set-Cookie value that opens a session on the dashboard at `port`. */
export function sessionCookie(port: number, session: string): string {
  return `${sessionCookieName(port)}=${session}; HttpOnly; SameSite=Strict; Path=/`;
}

// Secrets are kept as their SHA-256: a lookup's timing says nothing about a secret's characters.
function digest(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

function newSecret(): string {
  return randomBytes(32).toString('base64url');
}

/** The one-time tokens `goald ui` hands out and the sessions they opened (in memory: a restart forgets them). */
export class SessionBook {
  private readonly tokens = new Map<string, number>();
  private readonly sessions = new Set<string>();
  private readonly now: () => number;
  private readonly cookieName: string;

  constructor(port: number, now: () => number = Date.now) {
    this.cookieName = sessionCookieName(port);
    this.now = now;
  }

  /** A new one-time token, good once within 10 minutes. */
  issueToken(): string {
    this.dropExpired();
    const token = newSecret();
    this.tokens.set(digest(token), this.now() + TOKEN_TTL_MS);
    while (this.tokens.size > MAX_PENDING_TOKENS) this.tokens.delete(this.tokens.keys().next().value ?? '');
    return token;
  }

  /** Burns `token` and returns a new session's cookie value; refuses a token used, expired or never issued. */
  redeem(token: string | null): string {
    this.dropExpired();
    const key = token === null ? '' : digest(token);
    if (token === null || !this.tokens.has(key)) {
      throw forbidden('this dashboard link was already used, has expired, or was never issued', HINT_NEW_TOKEN);
    }
    this.tokens.delete(key);
    const session = newSecret();
    this.sessions.add(digest(session));
    while (this.sessions.size > MAX_SESSIONS) this.sessions.delete(this.sessions.values().next().value ?? '');
    return session;
  }

  /** Refuses a request without a session cookie this book opened. */
  checkSession(headers: GuardHeaders): void {
    const session = readCookie(headers, this.cookieName);
    if (session === undefined || !this.sessions.has(digest(session))) {
      throw forbidden('no dashboard session: open the link `goald ui` prints', HINT_NEW_TOKEN);
    }
  }

  private dropExpired(): void {
    const now = this.now();
    for (const [key, expires] of this.tokens) if (expires <= now) this.tokens.delete(key);
  }
}

/** What the guard decided about one request: a login to answer with a cookie, or a request to serve. */
export type GuardDecision = { kind: 'login'; session: string } | { kind: 'serve'; host: string };

/**
 * Applies every rule to one request, in order: Host; then the token exchange (GET /login?token=…) or the
 * session cookie; then, for anything but GET, the exact Origin, a JSON body and the custom header.
 */
export function guardRequest(request: { method: string; path: string; query: URLSearchParams; headers: GuardHeaders }, port: number, book: SessionBook): GuardDecision {
  const host = checkHost(request.headers, port);
  if (request.method === 'GET' && request.path === '/login') return { kind: 'login', session: book.redeem(request.query.get('token')) };
  book.checkSession(request.headers);
  if (request.method !== 'GET') {
    checkOrigin(request.headers, host);
    checkJsonPost(request.headers);
  }
  return { kind: 'serve', host };
}
