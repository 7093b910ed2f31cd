#!/usr/bin/env bash
# Installs the pinned agent CLIs the real-CLI tests (npm run test:agents) drive, into a cache folder
# outside the lockfile: each ships a native binary inside its npm package (~400 MB each), far too much to
# make every `npm ci` download. Idempotent: a cache that already holds the pinned versions is left alone.
set -euo pipefail

CLAUDE_CODE_VERSION=2.1.332
CODEX_VERSION=0.171.0
CACHE="${GOALD_AGENT_CLI_CACHE:-$HOME/.cache/goald-agent-clis}"

installed_version() {
  node -e 'try { process.stdout.write(require(process.argv[1]).version) } catch {}' \
    "$CACHE/node_modules/$1/package.json" 2>/dev/null || true
}

if [[ "$(installed_version @anthropic-ai/claude-code)" == "$CLAUDE_CODE_VERSION" &&
      "$(installed_version @openai/codex)" == "$CODEX_VERSION" ]]; then
  echo "agent CLIs already installed in $CACHE"
  exit 0
fi

mkdir -p "$CACHE"
# A package.json of its own keeps npm from walking up into a surrounding project.
[[ -f "$CACHE/package.json" ]] || echo '{ "name": "goald-agent-clis", "private": true }' > "$CACHE/package.json"
npm install --prefix "$CACHE" --no-save --no-audit --no-fund \
  "@anthropic-ai/claude-code@$CLAUDE_CODE_VERSION" "@openai/codex@$CODEX_VERSION"
echo "installed claude-code $CLAUDE_CODE_VERSION and codex $CODEX_VERSION in $CACHE"
echo "  claude: $CACHE/node_modules/.bin/claude"
echo "  codex:  $CACHE/node_modules/.bin/codex"
