// Matches a request's method and path against a table of `{ method, pattern }` routes, where a pattern is
// literal segments and `:name` parameters (`/v1/goals/:id/pause`). No framework: the table is small.

import { GoaldError } from '../errors.js';

export interface RoutePattern {
  method: string;
  /** `/v1/goals/:id`: `:name` segments capture one percent-decoded path segment. */
  pattern: string;
}

export type RouteMatch<R extends RoutePattern> =
  | { kind: 'found'; route: R; params: Record<string, string> }
  /** The path exists, but not for this method; `allow` lists the methods it has. */
  | { kind: 'wrong-method'; allow: string[] }
  | { kind: 'none' };

/** Finds the route for `method` and `pathname` (trailing slashes ignored). */
export function matchRoute<R extends RoutePattern>(routes: readonly R[], method: string, pathname: string): RouteMatch<R> {
  const segments = splitPath(pathname);
  const allow: string[] = [];
  for (const route of routes) {
    const params = matchSegments(splitPath(route.pattern), segments);
    if (params === null) continue;
    if (route.method === method) return { kind: 'found', route, params: decodeParams(params) };
    if (!allow.includes(route.method)) allow.push(route.method);
  }
  return allow.length > 0 ? { kind: 'wrong-method', allow } : { kind: 'none' };
}

/** Lists the routes for a hint: `GET /v1/ping, GET|POST /v1/goals, ...`. */
export function describeRoutes(routes: readonly RoutePattern[]): string {
  const methodsByPattern = new Map<string, string[]>();
  for (const route of routes) {
    const methods = methodsByPattern.get(route.pattern) ?? [];
    methods.push(route.method);
    methodsByPattern.set(route.pattern, methods);
  }
  return [...methodsByPattern].map(([pattern, methods]) => `${methods.join('|')} ${pattern}`).join(', ');
}

function splitPath(pathname: string): string[] {
  return pathname.split('/').filter((segment) => segment !== '');
}

/** The raw (still encoded) parameters when `pattern` matches `segments`, else null. */
function matchSegments(pattern: readonly string[], segments: readonly string[]): Record<string, string> | null {
  if (pattern.length !== segments.length) return null;
  const params: Record<string, string> = {};
  for (const [index, part] of pattern.entries()) {
    const segment = segments[index] ?? '';
    if (part.startsWith(':')) params[part.slice(1)] = segment;
    else if (part !== segment) return null;
  }
  return params;
}

function decodeParams(raw: Record<string, string>): Record<string, string> {
  const params: Record<string, string> = {};
  for (const [name, value] of Object.entries(raw)) {
    try {
      params[name] = decodeURIComponent(value);
    } catch {
      throw new GoaldError('bad-request', `the path parameter ${name} is not valid percent-encoding`, 'encode ids with encodeURIComponent');
    }
  }
  return params;
}
