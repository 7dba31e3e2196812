-- +goose Up
CREATE TABLE widgets (
    id    integer PRIMARY KEY,
    name  text NOT NULL UNIQUE,
    owner integer REFERENCES widgets (id),
    size  integer NOT NULL CHECK (size > 0)
);

-- +goose Down
DROP TABLE widgets;
