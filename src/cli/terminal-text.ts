// Text from the world (file names, agent messages, verdict reasons, check output) printed on a terminal must
// never drive it: an OSC sequence can retitle the window or write the clipboard, a CSI sequence can move the
// cursor and repaint what goald said, a bare carriage return can overwrite a line. Every control character
// but newline and tab is shown as a JSON-style `\u00XX` escape, so a line of `--json` output passes through
// unchanged in meaning (JSON.stringify already escapes C0; DEL, C1 and bidi controls become the same escapes).

// C0 controls except \t (09) and \n (0a), DEL, C1 controls, and the bidi embedding/override/isolate controls
// (U+202A–U+202E, U+2066–U+2069) that reorder what a reader sees ("Trojan Source", CVE-2021-42574).
// eslint-disable-next-line no-control-regex -- matching control characters is this module's job
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

/** `text` with every control character but newline and tab written out as `\u00XX` (CRLF becomes LF). */
export function toTerminalText(text: string): string {
  return text.replace(/\r\n/g, '\n').replace(CONTROL, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

