# syntax=docker/dockerfile:1
# gateway-routability-webhook. Build: docker build -t gateway-routability-webhook:dev .
# `npm run test:image` builds this from the committed tree and runs it the way the chart's pod runs.
#
# Node comes from the official node:<LTS>-bookworm-slim image, which also runs the build stages.
# The runtime stage starts from that image's own base, debian:bookworm-slim, and copies in only the
# node binary: npm, corepack, yarn and the C headers live in the node image's layers, and a later
# `rm` cannot take them out of a layer that ships.
#
# Registry settings and CA (a TLS-intercepting proxy, a private registry) reach `npm ci` as build
# secrets, which are mounted for that one RUN and stored in no layer:
#   docker build --secret id=npmrc,src=my.npmrc --secret id=npm-ca,src=ca.pem .
# where my.npmrc may say `cafile=/run/secrets/npm-ca`. Both are optional.
# Certificates are mounted at run time (the chart mounts a Secret at /tls); none are baked in.

ARG NODE_IMAGE=node:24-bookworm-slim
ARG RUNTIME_IMAGE=debian:bookworm-slim

# ---- production dependencies: cached until package.json or the lock file change ----
FROM ${NODE_IMAGE} AS deps
WORKDIR /src
ENV npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false
COPY package.json package-lock.json ./
# --ignore-scripts: nothing in this stack needs an install script (and npm 11 blocks them anyway).
# `npm ls` fails the step when the installed tree is incomplete: npm can crash yet exit 0.
# The npm cache is a cache mount: shared by both installs and across builds, stored in no layer.
RUN --mount=type=secret,id=npmrc,target=/root/.npmrc \
    --mount=type=secret,id=npm-ca,target=/run/secrets/npm-ca \
    --mount=type=cache,target=/root/.npm \
    npm ci --omit=dev --ignore-scripts \
 && npm ls --omit=dev --all > /dev/null

# ---- build: all dependencies, compile TypeScript ----
FROM ${NODE_IMAGE} AS build
WORKDIR /src
ENV npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false
COPY package.json package-lock.json ./
RUN --mount=type=secret,id=npmrc,target=/root/.npmrc \
    --mount=type=secret,id=npm-ca,target=/run/secrets/npm-ca \
    --mount=type=cache,target=/root/.npm \
    npm ci --ignore-scripts \
 && npm ls --all > /dev/null
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build && chmod 0755 dist/cli/main.js

# ---- runtime: Debian slim + node + production node_modules + dist ----
FROM ${RUNTIME_IMAGE}
LABEL org.opencontainers.image.title="gateway-routability-webhook" \
      org.opencontainers.image.description="Admission webhook enforcing Gateway API address routability (GEP-5093)" \
      org.opencontainers.image.licenses="Apache-2.0"
ENV NODE_ENV=production
# Layers from the least to the most often changed: node, dependencies, the program.
COPY --from=deps /usr/local/bin/node /usr/local/bin/node
RUN ln -s /app/dist/cli/main.js /usr/local/bin/routability-webhook \
 && node --version
WORKDIR /app
# Owned by root and read-only to the runtime user: the process cannot modify its own code.
COPY --from=deps /src/node_modules ./node_modules
COPY --from=build /src/package.json ./package.json
COPY --from=build /src/dist ./dist
# 65532 is the conventional "nonroot" uid/gid; numeric so runAsNonRoot can verify it.
USER 65532:65532
EXPOSE 8443 8080
ENTRYPOINT ["node", "/app/dist/cli/main.js"]
CMD ["serve"]
