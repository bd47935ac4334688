#!/usr/bin/env bash
# Copies the console screenshots docs/console.md shows from screenshots/console/ (written by the browser
# tests at 360 and 1440 px, not committed) into docs/console/ (committed). Run the console's e2e tests
# first: npx vitest run test/e2e/console
set -euo pipefail
cd "$(dirname "$0")/.."
PAGES=(overview-1440 overview-360 log-1440 settings-1440 backfill-estimate-1440 backfill-progress-360 playground-1440 signin-1440 signin-refused-360 operator-installations-1440 operator-account-1440)
mkdir -p docs/console
for name in "${PAGES[@]}"; do
  cp "screenshots/console/${name}.png" "docs/console/${name}.png"
done
echo "copied ${#PAGES[@]} screenshots into docs/console/"
