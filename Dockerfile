# syntax=docker/dockerfile:1
# The application image: one image, four roles (`node dist/src/main.js api|worker|relay|migrate`).
# Used by docker-compose.yml; see docs/operations.md#running-it.

# --- Build: the full dependency tree, TypeScript compiled to dist/ --------------------------------------------------
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# No install scripts: none of them is needed to compile, and none runs that the lockfile did not pin.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY . .
# The commit the image is built from (`docker compose build --build-arg GIT_COMMIT=$(git rev-parse HEAD)`): it names the
# workers' Worker Deployment Version, dist/build-id; the context has no .git. Without it, the hash of the workflow code.
ARG GIT_COMMIT=
RUN npm run build

# --- Runtime: production dependencies and the compiled code only ----------------------------------------------------
FROM node:20-bookworm-slim AS runtime
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
# @temporalio/testing is a production dependency (the embedded default's dev-server bootstrap imports it), so it
# stays. The production roles never start the embedded Postgres or the Temporal dev server: DATABASE_URL and
# TEMPORAL_ADDRESS point at real ones.
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
# The admin page's static files, served as they are from src/admin/static (src/admin/page-operations.ts).
COPY --from=build /app/src/admin/static ./src/admin/static
# Files stay owned by root and read-only for the process; it writes nothing to disk, except the login provider
# (src/oidc-provider/) its signing key, into the volume docker-compose.yml mounts here (a new volume takes this owner).
RUN mkdir /var/lib/oidc-provider && chown node:node /var/lib/oidc-provider
USER node
EXPOSE 3000
CMD ["node", "dist/src/main.js", "api"]
