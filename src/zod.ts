// zod as every goald module imports it: configured once, before any schema parses. `jitless`: zod 4
// otherwise generates (new Function) and compiles a parser for each object schema on its first parse,
// which a short-lived process pays for every schema it touches (5 ms of a CLI start for state.json alone)
// and barely earns back: a long-running daemon parses as fast without it (within 10 %).
import { z } from 'zod';

z.config({ jitless: true });

export { z };
