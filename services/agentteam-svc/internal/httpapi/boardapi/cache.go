package boardapi

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/motionstudio/platform/pkg/bounded"
)

// boardCacheEntries bounds the encoded boards kept, least recently used out first: at most 100
// tasks a column, about 140 KB each plain and a fraction of that compressed, so under 25 MB.
const boardCacheEntries = 128

// boardKey names one encoded page of a board at one version. A board's version changes with
// every write to its tasks (on any replica), so an entry is never stale: a newer board has a
// newer key.
type boardKey struct {
	team          string
	version       int64
	offset, limit int
}

// encodedBoard is a board page as JSON, plain and gzip-compressed.
type encodedBoard struct{ plain, gzipped []byte }

func newBoardCache() *bounded.Map[boardKey, encodedBoard] {
	return bounded.New(bounded.Options[boardKey, encodedBoard]{Max: boardCacheEntries})
}

// encodeBoard compresses the JSON once, so that every later read of the same version sends a
// few kilobytes instead of re-encoding and writing the whole board.
func encodeBoard(plain []byte) (encodedBoard, error) {
	var buf bytes.Buffer
	w, err := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	if err != nil {
		return encodedBoard{}, fmt.Errorf("boardapi: gzip: %w", err)
	}
	if _, err := w.Write(plain); err != nil {
		return encodedBoard{}, fmt.Errorf("boardapi: gzip: %w", err)
	}
	if err := w.Close(); err != nil {
		return encodedBoard{}, fmt.Errorf("boardapi: gzip: %w", err)
	}
	return encodedBoard{plain: plain, gzipped: buf.Bytes()}, nil
}

// send answers the board, compressed when the client accepts gzip.
func (b encodedBoard) send(c echo.Context) error {
	h := c.Response().Header()
	h.Add(echo.HeaderVary, echo.HeaderAcceptEncoding)
	if strings.Contains(c.Request().Header.Get(echo.HeaderAcceptEncoding), "gzip") {
		h.Set(echo.HeaderContentEncoding, "gzip")
		return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, b.gzipped)
	}
	return c.JSONBlob(http.StatusOK, b.plain)
}
