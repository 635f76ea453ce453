# tau-gateway container image.
#
# Two stages: `build` compiles the TypeScript and bundles the command line (dist/tau-gateway.mjs) with
# the dev dependencies; the runtime stage gets only the production dependencies, dist/, the
# committed schema/ (served by /schema and used by the validators) and generated/validators/ (the
# validators' precompiled fast checks).
# test/e2e/docker-runtime.test.ts reproduces the runtime stage from this file.
#
#   docker build -t tau-gateway .
#   docker run --rm -p 8080:8080 -e TAU_GATEWAY_TOKEN=change-me tau-gateway

FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY scripts ./scripts
COPY src ./src
COPY generated ./generated
COPY schema ./schema
RUN npm run build

FROM node:20-bookworm-slim
# bookworm-slim rather than alpine: the embedded Tau host runs commands (session.exec, /bash) with
# `bash -l`, which the Debian image has.
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
COPY schema ./schema
COPY generated/validators ./generated/validators
# New sessions work in /workspace (mount a volume there); the gateway's own files stay read-only.
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
# Exec form: node is PID 1 and receives SIGTERM itself, so `docker stop` drains the gateway.
STOPSIGNAL SIGTERM
CMD ["node", "dist/tau-gateway.mjs", "serve"]
