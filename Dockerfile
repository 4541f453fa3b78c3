# syntax=docker/dockerfile:1
# The release image: the bot and the HTTP API, compiled, on production dependencies only.
# Its steps are scripts/release-install.sh, which test/release.test.ts runs too (the test stands in for
# `npm ci` with the repository's own install of the same lock file).
#   docker build -t cards-bot .
#   cp deploy/container.env .env   # set BOT_TOKEN; its paths and host are the container's (not .env.example's)
#   docker run --env-file .env -v cards-data:/app/data -v cards-keys:/app/keys -p 127.0.0.1:3000:3000 cards-bot
# Published on 127.0.0.1 only: TLS goes in front (a reverse proxy; the README's "Deploying").
# See compose.yaml for Postgres and a second, API-only instance.

# Node 24 LTS, whose SQLite driver (better-sqlite3 13) ships its binaries: no stage needs a compiler.

# Every dependency (tsc), then dist/ and the release tree in /release. No install script runs: they build
# Node 20's driver (better-sqlite3 12) and check tsx's esbuild, and tsc needs neither.
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY scripts ./scripts
COPY src ./src
COPY migrations ./migrations
COPY locales ./locales
RUN sh scripts/release-install.sh build /release

# The release with its production dependencies (no tsc, no tsx).
FROM node:24-bookworm-slim AS deps
WORKDIR /app
COPY --from=build /release ./
RUN sh scripts/release-install.sh runtime

FROM node:24-bookworm-slim AS runtime
ENV NODE_ENV=production \
    HTTP_HOST=0.0.0.0 \
    HTTP_PORT=3000 \
    DATABASE_URL=/app/data/cards.db
WORKDIR /app
COPY --from=deps --chown=root:root /app ./
# The database (SQLite) in one volume, the generated card-data key in another (CARD_DATA_KEY_FILE unset:
# /app/keys/card-data.key, or an older image's /app/data/card-data.key while it is there), so a copy of
# the database's volume does not carry the key. Both owned by the service's user.
RUN mkdir -p /app/data /app/keys && chown node:node /app/data /app/keys && chmod 0700 /app/data /app/keys
USER node
VOLUME ["/app/data", "/app/keys"]
EXPOSE 3000
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.HTTP_PORT||3000)+'/livez').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# SIGTERM (docker stop) finishes the updates and requests in flight, then exits 0.
CMD ["node", "dist/src/main.js"]
