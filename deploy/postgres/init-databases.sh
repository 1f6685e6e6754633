#!/bin/sh
# Runs once, when the postgres container initialises an empty data volume (/docker-entrypoint-initdb.d).
# One role and database for the application, one role owning Temporal's two databases: neither can read the
# other's data. Passwords come from the environment and reach SQL as psql variables, which quote them.
: "${APP_DB_PASSWORD:?APP_DB_PASSWORD must be set}"
: "${TEMPORAL_DB_PASSWORD:?TEMPORAL_DB_PASSWORD must be set}"

psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" \
  -v app_password="$APP_DB_PASSWORD" -v temporal_password="$TEMPORAL_DB_PASSWORD" <<'SQL'
CREATE ROLE donations LOGIN PASSWORD :'app_password';
CREATE DATABASE donations OWNER donations;
REVOKE CONNECT ON DATABASE donations FROM PUBLIC;

CREATE ROLE temporal LOGIN PASSWORD :'temporal_password';
CREATE DATABASE temporal OWNER temporal;
CREATE DATABASE temporal_visibility OWNER temporal;
REVOKE CONNECT ON DATABASE temporal FROM PUBLIC;
REVOKE CONNECT ON DATABASE temporal_visibility FROM PUBLIC;
SQL
