package media

import (
	"bytes"
	"encoding/binary"

	"golang.org/x/image/font/sfnt"
)

// Font formats with their content types.
const (
	formatTTF   = "ttf"
	formatOTF   = "otf"
	formatWOFF  = "woff"
	formatWOFF2 = "woff2"
)

var fontContentTypes = map[string]string{
	formatTTF: "font/ttf", formatOTF: "font/otf", formatWOFF: "font/woff", formatWOFF2: "font/woff2",
}

// Sizes of the fixed parts of the WOFF (1.0) and WOFF2 containers.
const (
	woffHeaderLen     = 44
	woffTableEntryLen = 20
	woff2HeaderLen    = 48
)

// ParseFontFormat names the format of a whole font file and its content type, and answers false
// unless the bytes are a font: TrueType and OpenType files must parse with sfnt (their table
// directory and the tables a renderer needs); WOFF and WOFF2 files, which need decompressing to
// parse, must carry a consistent container header (signature, declared length equal to the
// file's, at least one table, reserved field zero, and for WOFF a table directory whose tables
// lie inside the file).
func ParseFontFormat(data []byte) (format, contentType string, ok bool) {
	switch {
	case bytes.HasPrefix(data, []byte{0x00, 0x01, 0x00, 0x00}), bytes.HasPrefix(data, []byte("true")):
		format = formatTTF
		ok = parsesAsSFNT(data)
	case bytes.HasPrefix(data, []byte("OTTO")):
		format = formatOTF
		ok = parsesAsSFNT(data)
	case bytes.HasPrefix(data, []byte("wOFF")):
		format = formatWOFF
		ok = validWOFF(data)
	case bytes.HasPrefix(data, []byte("wOF2")):
		format = formatWOFF2
		ok = validWOFF2(data)
	}
	if !ok {
		return "", "", false
	}
	return format, fontContentTypes[format], true
}

func parsesAsSFNT(data []byte) bool {
	f, err := sfnt.Parse(data)
	return err == nil && f.NumGlyphs() > 0
}

// validWOFF checks a WOFF 1.0 header (signature, flavor, length, numTables, reserved,
// totalSfntSize, ...) and its table directory.
func validWOFF(data []byte) bool {
	if len(data) < woffHeaderLen {
		return false
	}
	be := binary.BigEndian
	length := be.Uint32(data[8:])
	numTables := int(be.Uint16(data[12:]))
	reserved := be.Uint16(data[14:])
	if int64(length) != int64(len(data)) || numTables == 0 || reserved != 0 {
		return false
	}
	dirEnd := woffHeaderLen + numTables*woffTableEntryLen
	if dirEnd > len(data) {
		return false
	}
	for i := range numTables {
		entry := data[woffHeaderLen+i*woffTableEntryLen:]
		offset, compLength := be.Uint32(entry[4:]), be.Uint32(entry[8:])
		if int64(offset) < int64(dirEnd) || int64(offset)+int64(compLength) > int64(len(data)) || compLength == 0 {
			return false
		}
	}
	return true
}

// validWOFF2 checks a WOFF2 header (signature, flavor, length, numTables, reserved,
// totalSfntSize, totalCompressedSize, ...): the compressed font data must fit in the file.
func validWOFF2(data []byte) bool {
	if len(data) < woff2HeaderLen {
		return false
	}
	be := binary.BigEndian
	length := be.Uint32(data[8:])
	numTables := be.Uint16(data[12:])
	reserved := be.Uint16(data[14:])
	totalCompressed := be.Uint32(data[20:])
	return int64(length) == int64(len(data)) && numTables > 0 && reserved == 0 &&
		totalCompressed > 0 && int64(woff2HeaderLen)+int64(totalCompressed) <= int64(len(data))
}
