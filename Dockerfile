# syntax=docker/dockerfile:1
# gateway-routability-webhook: two stages, production dependencies only, non-root, no key material.
# Build: docker build -t gateway-routability-webhook:dev .
# Certificates are mounted at run time (the Helm chart mounts a Secret at /tls); none are baked in.

ARG NODE_IMAGE=node:20-bookworm-slim

# ---- build: compile TypeScript, then reduce node_modules to production dependencies ----
FROM ${NODE_IMAGE} AS build
WORKDIR /src
ENV npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false
COPY package.json package-lock.json ./
# --ignore-scripts: nothing in this stack needs an install script (and npm 11 blocks them anyway).
RUN npm ci --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build \
 && npm ci --omit=dev --ignore-scripts \
 && chmod 0755 dist/cli/main.js

# ---- runtime ----
FROM ${NODE_IMAGE}
LABEL org.opencontainers.image.title="gateway-routability-webhook" \
      org.opencontainers.image.description="Admission webhook enforcing Gateway API address routability (GEP-5093)" \
      org.opencontainers.image.licenses="Apache-2.0"
ENV NODE_ENV=production
WORKDIR /app
# The runtime needs neither npm nor corepack; dropping them removes their CVEs from the image.
RUN rm -rf /usr/local/lib/node_modules/npm /usr/local/lib/node_modules/corepack \
      /usr/local/bin/npm /usr/local/bin/npx /usr/local/bin/corepack \
 && ln -s /app/dist/cli/main.js /usr/local/bin/routability-webhook
# Owned by root and read-only to the runtime user: the process cannot modify its own code.
COPY --from=build /src/package.json ./package.json
COPY --from=build /src/node_modules ./node_modules
COPY --from=build /src/dist ./dist
# 65532 is the conventional "nonroot" uid/gid; numeric so runAsNonRoot can verify it.
USER 65532:65532
EXPOSE 8443 8080
ENTRYPOINT ["node", "/app/dist/cli/main.js"]
CMD ["serve"]
