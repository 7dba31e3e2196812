-- +goose Up
-- The token signing keys every identity-svc replica reads (internal/token Ring). A key's state
-- (next, active, retired, withdrawn) follows from activates_at and the next key's: it is never
-- written, so replicas agree without coordinating. private_key is the PKCS #8 DER sealed with
-- AES-256-GCM under the service's encryption key, bound to kid.
CREATE TABLE signing_keys (
    kid          text PRIMARY KEY,
    alg          text NOT NULL CHECK (alg IN ('EdDSA', 'ES256', 'RS256')),
    private_key  bytea NOT NULL,
    created_at   timestamptz NOT NULL,
    activates_at timestamptz NOT NULL
);
CREATE INDEX signing_keys_activates_at ON signing_keys (activates_at);

-- +goose Down
DROP TABLE signing_keys;
