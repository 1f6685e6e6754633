#!/bin/sh
# One-off job (temporalio/admin-tools image): brings Temporal's two Postgres databases to the schema version this
# image ships. The postgres init script creates the databases; setup-schema leaves an already versioned database
# alone and update-schema applies only missing versions, so the job is a no-op on every later `docker compose up`.
# Connection settings are the server's own variables (DB, POSTGRES_SEEDS, DB_PORT, POSTGRES_USER, DBNAME,
# VISIBILITY_DBNAME); temporal-sql-tool reads the password from SQL_PASSWORD. `npm run stack` runs this script too,
# with the tools it built and TEMPORAL_SCHEMA_DIR pointing at the schemas of the same Go module.
set -eu
: "${SQL_PASSWORD:?SQL_PASSWORD must be set}"
schema_root=${TEMPORAL_SCHEMA_DIR:-/etc/temporal/schema}/postgresql/v12

# Waits for Postgres with the image's nc; `npm run stack` has no nc and starts Postgres before this job anyway.
attempts_left=30
while command -v nc >/dev/null && ! nc -z "$POSTGRES_SEEDS" "$DB_PORT"; do
  attempts_left=$((attempts_left - 1))
  [ "$attempts_left" -gt 0 ] || { echo "Postgres at $POSTGRES_SEEDS:$DB_PORT did not accept connections within 60 s" >&2; exit 1; }
  sleep 2
done

migrate() {
  database=$1
  schema_dir=$2
  echo "Temporal schema: $database"
  temporal-sql-tool --plugin "$DB" --ep "$POSTGRES_SEEDS" -p "$DB_PORT" -u "$POSTGRES_USER" --db "$database" \
    setup-schema -v 0.0
  temporal-sql-tool --plugin "$DB" --ep "$POSTGRES_SEEDS" -p "$DB_PORT" -u "$POSTGRES_USER" --db "$database" \
    update-schema -d "$schema_root/$schema_dir/versioned"
}

migrate "$DBNAME" temporal
migrate "$VISIBILITY_DBNAME" visibility
echo "Temporal schema is current"
