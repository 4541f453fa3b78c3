# syntax=docker/dockerfile:1
# The release image: the bot and the HTTP API, compiled, on production dependencies only.
# Its steps are scripts/release-install.sh, which test/release.test.ts runs too (the test stands in for
# `npm ci` with the repository's own install of the same lock file).
#   docker build -t cards-bot .
#   docker run --env-file .env -v cards-data:/app/data -p 3000:3000 cards-bot
# See compose.yaml for Postgres and a second, API-only instance.

# better-sqlite3 compiles its native module when no prebuilt binary fits.
FROM node:20-bookworm-slim AS toolchain
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app

# Every dependency, then dist/ and the release tree in /release.
FROM toolchain AS build
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts=false --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY scripts ./scripts
COPY src ./src
COPY migrations ./migrations
COPY locales ./locales
RUN sh scripts/release-install.sh build /release

# The release with its production dependencies (no tsc, no tsx).
FROM toolchain AS deps
COPY --from=build /release ./
RUN sh scripts/release-install.sh runtime

FROM node:20-bookworm-slim AS runtime
ENV NODE_ENV=production \
    HTTP_HOST=0.0.0.0 \
    HTTP_PORT=3000 \
    DATABASE_URL=/app/data/cards.db \
    CARD_DATA_KEY_FILE=/app/data/card-data.key
WORKDIR /app
COPY --from=deps --chown=root:root /app ./
# The database (SQLite) and the generated card-data key live in the volume, owned by the service's user.
RUN mkdir -p /app/data && chown node:node /app/data
USER node
VOLUME /app/data
EXPOSE 3000
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.HTTP_PORT||3000)+'/livez').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# SIGTERM (docker stop) finishes the updates and requests in flight, then exits 0.
CMD ["node", "dist/src/main.js"]
