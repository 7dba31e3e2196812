-- +goose Up
-- mfa_factors are users' second factors. A TOTP factor keeps its secret sealed with AES-256-GCM
-- (nonce || ciphertext, bound to the factor id); last_used_step refuses a time step twice.
CREATE TABLE mfa_factors (
    id                uuid PRIMARY KEY,
    user_id           uuid        NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    tenant_id         uuid        NOT NULL REFERENCES tenants (id),
    factor_type       text        NOT NULL CHECK (factor_type IN ('TOTP', 'SMS')),
    label             text        NOT NULL DEFAULT '',
    secret_sealed     bytea,
    phone_number      text,
    verified_at       timestamptz,
    last_used_step    bigint      NOT NULL DEFAULT 0,
    created_at        timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT mfa_factors_totp_secret CHECK (factor_type <> 'TOTP' OR secret_sealed IS NOT NULL),
    CONSTRAINT mfa_factors_sms_phone CHECK (factor_type <> 'SMS' OR phone_number IS NOT NULL)
);
CREATE INDEX mfa_factors_user_idx ON mfa_factors (user_id, created_at);

-- mfa_recovery_codes are single-use codes, stored as SHA-256 of "<user id>:<code>"; they count
-- only while their factor is verified.
CREATE TABLE mfa_recovery_codes (
    id         uuid PRIMARY KEY,
    user_id    uuid        NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    factor_id  uuid        NOT NULL REFERENCES mfa_factors (id) ON DELETE CASCADE,
    code_hash  text        NOT NULL,
    used_at    timestamptz,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX mfa_recovery_codes_user_hash_key ON mfa_recovery_codes (user_id, code_hash);
CREATE INDEX mfa_recovery_codes_factor_idx ON mfa_recovery_codes (factor_id);

-- +goose Down
DROP TABLE mfa_recovery_codes;
DROP TABLE mfa_factors;
