# tau-gateway container image.
#
# Two stages: `build` bundles the command line (dist/tau-gateway.mjs, which runs dist/tau-gateway.cjs)
# with the dev dependencies; the runtime stage gets only what runs: the production dependencies, the
# launcher, the bundle and its code cache (dist/cli-cache/, made by a start of the bundle), the
# validators' code caches (dist/validator-cache/), the committed schema/ (served by /schema and used
# by the validators), generated/validators/ (their precompiled fast checks) and inspector/ (the page
# `serve --inspector` serves, static files used as they are). Not the source maps, which embed every
# source file.
# test/e2e/cli/docker-runtime.test.ts reproduces the runtime stage from this file;
# test/container/ builds and runs the real image where a Docker engine can start.
#
#   docker build -t tau-gateway .
#   docker run --rm -p 8080:8080 -e TAU_GATEWAY_TOKEN=change-me tau-gateway
#   docker run --rm tau-gateway --help            (any tau-gateway command: validate, app-server, …)
#
# The base is a build argument, so another Node image (a mirror, a pinned digest, Node 22) can be
# swapped in: docker build --build-arg NODE_IMAGE=node:22-bookworm-slim .
ARG NODE_IMAGE=node:24-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
# --ignore-scripts: the package's `prepare` (the whole build, for installs from git) needs the
# sources, which are copied after the dependencies so that their layer is cached.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json ./
COPY scripts ./scripts
COPY src ./src
COPY generated ./generated
COPY schema ./schema
# The bundle alone (esbuild): the compiled library and its .d.ts that `npm run build` also makes are
# not shipped, and the type-check is CI's (npm run typecheck). The code caches are made here, by the
# same Node that runs them (V8 rejects another's).
RUN npm run build:cli && find dist -name '*.map' -delete

FROM ${NODE_IMAGE}
# bookworm-slim rather than alpine: the embedded Tau host runs commands (session.exec, /bash) with
# `bash -l`, which the Debian image has. tini (Debian's) is PID 1: it passes signals on to node and
# reaps the orphans that commands leave behind (a backgrounded process whose shell exited), which
# node as PID 1 never waits for, so they would stay zombies for the container's life.
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends tini \
    && apt-get clean \
    && rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
COPY schema ./schema
COPY generated/validators ./generated/validators
COPY inspector ./inspector
# New sessions work in /workspace (mount a volume there, owned by uid 1000); the gateway's own files
# stay read-only, and nothing else is written, so the container runs with --read-only.
RUN mkdir -p /workspace && chown node:node /workspace
USER node
# Every `tau-gateway serve` flag has a TAU_GATEWAY_* variable (see docs/configuration.md). Listening on
# all interfaces needs a token (TAU_GATEWAY_TOKEN or TAU_GATEWAY_TOKENS_FILE) unless
# TAU_GATEWAY_INSECURE_NO_AUTH=true is set deliberately.
ENV TAU_GATEWAY_HOST=0.0.0.0 \
    TAU_GATEWAY_PORT=8080 \
    TAU_GATEWAY_DEFAULT_CWD=/workspace
EXPOSE 8080
# /healthz needs no token; the port follows TAU_GATEWAY_PORT if it is changed at run time.
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 \
    CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.TAU_GATEWAY_PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# docker stop sends SIGTERM to tini, which hands it to node: the gateway drains (8 s by default,
# inside docker stop's 10 s; a longer --drain-timeout needs docker run --stop-timeout) and exits 0.
STOPSIGNAL SIGTERM
# The image is the command line: arguments after the image name replace `serve`.
ENTRYPOINT ["tini", "--", "node", "/app/dist/tau-gateway.mjs"]
CMD ["serve"]
