#!/bin/sh
# The release's steps, the same in the Dockerfile and in test/release.test.ts (which runs this script):
#
#   sh scripts/release-install.sh build OUT   in a tree with every dependency installed (`npm ci`):
#                                             compiles dist/ and puts the release in OUT: package.json,
#                                             package-lock.json, scripts/, dist/ (src and the compiled
#                                             migrations) and locales/; no sources.
#   sh scripts/release-install.sh runtime     in OUT: installs the production dependencies only and
#                                             checks the release (no tsc nor tsx, compiled migrations).
#
# The release then runs as `node dist/src/main.js` (the image's CMD, the systemd unit) or `npm start`.
set -eu

fail() { echo "release-install: $*" >&2; exit 1; }

case "${1:-}" in
  build)
    out="${2:?usage: release-install.sh build OUT}"
    npm run build
    mkdir -p "$out"
    cp package.json package-lock.json "$out/"
    cp -R scripts dist locales "$out/"
    ;;
  runtime)
    # The one install script among the production dependencies builds better-sqlite3 12, the driver on Node 20
    # (src/db/better-sqlite3.ts), from source: it runs there. From Node 22 on the driver is better-sqlite3 13,
    # whose binaries come in its package, so no script runs and no compiler is needed (the image).
    others=$(node -e '
      const { packages } = JSON.parse(require("fs").readFileSync("package-lock.json", "utf8"));
      for (const [name, p] of Object.entries(packages))
        if (p.hasInstallScript && !p.dev && name !== "node_modules/better-sqlite3") console.log(name);')
    [ -z "$others" ] || fail "production dependencies with install scripts this script does not know: $others"
    scripts=--ignore-scripts=false
    [ "$(node -p 'process.versions.node.split(".")[0] >= 22')" = false ] || scripts=--ignore-scripts
    # Optional packages are left out too: TypeScript is an optional peer of a runtime dependency (valibot,
    # under the Mini App's init-data check), which npm would otherwise install; the only other one is pg's
    # Cloudflare socket.
    npm ci --omit=dev --omit=optional "$scripts" --no-audit --no-fund
    for dev in typescript tsx esbuild; do
      [ ! -e "node_modules/$dev" ] || fail "node_modules/$dev is installed in a production install"
    done
    [ -f dist/src/main.js ] && [ -f dist/src/api-main.js ] && [ -f dist/src/admin/cli.js ] || fail "dist/ is not built"
    ls dist/migrations/*.js >/dev/null 2>&1 || fail "dist/migrations has no compiled migration"
    ls locales/*.ftl >/dev/null 2>&1 || fail "locales/ is missing"
    [ ! -e src ] || fail "the release carries src/"
    ;;
  *)
    fail "usage: release-install.sh build OUT | runtime"
    ;;
esac
