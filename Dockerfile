# gateway-routability-webhook. Build: docker build -t gateway-routability-webhook:dev .
# `npm run test:image` builds this from the committed tree and runs it the way the chart's pod runs.
#
# Node comes from the official node:<LTS>-bookworm-slim image, which also runs the build stages.
# The runtime image has no shell and no package manager: it starts FROM scratch and gets a root
# assembled in the `rootfs` stage from that same image: the node binary, the three Debian packages
# node links against (libc6, libgcc-s1, libstdc++6, with their dpkg records in
# /var/lib/dpkg/status.d/ so SBOM scanners list them), /etc/os-release, and passwd/group entries
# for root and the 65532 "nonroot" user. No npm, corepack, yarn or headers: they sit in the node
# image's layers, and a later `rm` cannot take them out of a layer that ships.
#
# The base is pinned by digest (the index digest, all platforms). The release builds this
# default; `npm run test:image`, on a machine that cannot reach Docker Hub, builds a local
# stand-in and passes --build-arg NODE_IMAGE=...@<the stand-in's own digest> (docs/dev/decisions.md).
# Bump: `docker buildx imagetools inspect node:24-bookworm-slim` prints the new index digest; the
# release workflow refuses a digest whose node is not scripts/node-lts.mjs's NODE_VERSION.
#
# Registry settings and CA (a TLS-intercepting proxy, a private registry) reach `npm ci` as build
# secrets, which are mounted for that one RUN and stored in no layer:
#   docker build --secret id=npmrc,src=my.npmrc --secret id=npm-ca,src=ca.pem .
# where my.npmrc may say `cafile=/run/secrets/npm-ca`. Both are optional.
# Certificates are mounted at run time (the chart mounts a Secret at /tls); none are baked in.
# No `# syntax=` line: it would make BuildKit pull a Dockerfile frontend image by a moving tag; the
# builder's own frontend has RUN --mount.

ARG NODE_IMAGE=docker.io/library/node:24-bookworm-slim@sha256:235600a8101ab264e117b1768e925532262668dc9b581ef1dd7d96ced463b8e7

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

# ---- rootfs: the runtime's whole root, assembled where a shell exists ----
FROM ${NODE_IMAGE} AS rootfs
# Each package's own files (dpkg -L) minus /usr/share (docs, gdb/python helpers) and glibc's iconv
# modules (node uses its built-in ICU), plus each package's copyright file (libgcc-s1's and
# libstdc++6's doc folders link to gcc's). The root is merged-/usr like Debian's.
# `chroot /rootfs node` proves the root alone runs node: a missing library fails the build here.
RUN set -eu; \
    mkdir -p /rootfs/usr/bin /rootfs/usr/sbin /rootfs/usr/lib /rootfs/usr/local/bin /rootfs/etc \
      /rootfs/var/lib/dpkg/status.d /rootfs/app; \
    for d in bin sbin lib; do ln -s "usr/$d" "/rootfs/$d"; done; \
    if [ -L /lib64 ]; then mkdir -p /rootfs/usr/lib64; ln -s "$(readlink /lib64)" /rootfs/lib64; fi; \
    for pkg in libc6 libgcc-s1 libstdc++6; do \
      dpkg -L "$pkg" | while read -r f; do \
        if [ -d "$f" ] && [ ! -L "$f" ]; then continue; fi; \
        case "$f" in /usr/share/*|*/gconv/*) continue ;; esac; \
        cp -a --parents "$f" /rootfs; \
      done; \
      mkdir -p "/rootfs/usr/share/doc/$pkg"; \
      cp -L "/usr/share/doc/$pkg/copyright" "/rootfs/usr/share/doc/$pkg/copyright"; \
      dpkg-query --status "$pkg" > "/rootfs/var/lib/dpkg/status.d/$pkg"; \
    done; \
    cp -a --parents /usr/lib/os-release /etc/os-release /etc/nsswitch.conf /rootfs; \
    cp /usr/local/bin/node /rootfs/usr/local/bin/node; \
    printf 'root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n' \
      > /rootfs/etc/passwd; \
    printf 'root:x:0:\nnonroot:x:65532:\n' > /rootfs/etc/group; \
    mkdir -m 1777 /rootfs/tmp; \
    chroot /rootfs /usr/local/bin/node -e "if (require('node:os').userInfo({}).uid !== 0) process.exit(1)"; \
    chroot --userspec=65532:65532 /rootfs /usr/local/bin/node -e "require('node:os').userInfo()"

# ---- runtime: no shell, no package manager: node, production node_modules, dist ----
FROM scratch
LABEL org.opencontainers.image.title="gateway-routability-webhook" \
      org.opencontainers.image.description="Admission webhook enforcing Gateway API address routability (GEP-5093)" \
      org.opencontainers.image.licenses="Apache-2.0"
ENV NODE_ENV=production PATH=/usr/local/bin
# Layers from the least to the most often changed: the root with node, dependencies, the program.
COPY --from=rootfs /rootfs/ /
WORKDIR /app
# Owned by root and read-only to the runtime user: the process cannot modify its own code.
COPY --from=deps /src/node_modules ./node_modules
COPY --from=build /src/package.json ./package.json
COPY --from=build /src/dist ./dist
# 65532 is the conventional "nonroot" uid/gid; numeric so runAsNonRoot can verify it.
USER 65532:65532
EXPOSE 8443 8080
ENTRYPOINT ["/usr/local/bin/node", "/app/dist/cli/main.js"]
CMD ["serve"]
