-- +goose Up
-- signup_affiliate_code is the affiliate code given at registration, kept for the affiliate
-- programme to credit its owner.
ALTER TABLE users ADD COLUMN signup_affiliate_code text;

-- +goose Down
ALTER TABLE users DROP COLUMN signup_affiliate_code;
