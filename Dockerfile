# The servebench image the Kubernetes manifests of `servebench k8s` run (docs/distributed.md): the CLI only, no
# desktop app. Build: docker build -t servebench .   Run: docker run --rm servebench run --help
FROM node:22-slim AS build
WORKDIR /app
# The desktop app's Electron binary is never needed here; install scripts would fetch it and build the app.
ENV ELECTRON_SKIP_BINARY_DOWNLOAD=1
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY scripts ./scripts
COPY src ./src
COPY bench ./bench
COPY tsconfig.json ./
RUN npm run build:cli

FROM node:22-slim
WORKDIR /app
ENV ELECTRON_SKIP_BINARY_DOWNLOAD=1 NODE_ENV=production
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
COPY bin ./bin
COPY resources ./resources
RUN ln -s /app/bin/servebench.js /usr/local/bin/servebench
# Workers reach rank 0 on this port (the manifests' headless Service); results go to /results.
EXPOSE 29517
USER node
ENTRYPOINT ["servebench"]
CMD ["--help"]
