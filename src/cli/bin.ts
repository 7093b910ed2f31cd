#!/usr/bin/env node
// The `goald` executable: a one-liner over main().
import { main } from './main.js';

process.exitCode = await main(process.argv);
