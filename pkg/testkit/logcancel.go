package testkit

import (
	"context"
	"log/slog"
)

// CancelOnLog wraps a log handler so that the first record with the message msg cancels a
// context: a spec interrupts a command at a known point (after its first batch, say) without a
// hook in the command.
func CancelOnLog(h slog.Handler, msg string, cancel context.CancelFunc) slog.Handler {
	return cancelOnLog{Handler: h, msg: msg, cancel: cancel}
}

type cancelOnLog struct {
	slog.Handler
	msg    string
	cancel context.CancelFunc
}

func (h cancelOnLog) Handle(ctx context.Context, r slog.Record) error {
	if r.Message == h.msg {
		h.cancel()
	}
	return h.Handler.Handle(ctx, r)
}

func (h cancelOnLog) WithAttrs(attrs []slog.Attr) slog.Handler {
	return cancelOnLog{Handler: h.Handler.WithAttrs(attrs), msg: h.msg, cancel: h.cancel}
}

func (h cancelOnLog) WithGroup(name string) slog.Handler {
	return cancelOnLog{Handler: h.Handler.WithGroup(name), msg: h.msg, cancel: h.cancel}
}
