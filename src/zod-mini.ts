// zod/mini as the modules on `goald start`'s way to its first agent import it: the same checks and the
// same core as `src/zod.ts`'s classic zod (and its configuration: jitless, set by either), without the
// ~40 methods classic zod hangs on every schema it builds. Built and parsed once in a fresh process
// through a code cache, a goal record's worth of schemas took 2.2–2.6 ms here against 6.7–10.4 ms with
// classic zod, whose chunk is 4× the size (docs/performance.md). The rest of goald keeps classic zod: the
// two interoperate (a mini schema nests in a classic one), and classic's chunk loads only when needed.
import * as z from 'zod/mini';

// Classic zod sets its English messages as it loads; mini leaves them to its user ("Invalid input" alone).
z.config(z.locales.en());
z.config({ jitless: true });

export { z };
