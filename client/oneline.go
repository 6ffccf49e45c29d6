package client

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxMessage bounds what an error of the client quotes of a reply body, in bytes.
const maxMessage = 200

// OneLine returns s on one line (control characters as spaces, runs of spaces as one),
// cut after n bytes on a rune boundary, "..." marking the cut. The client's errors quote
// what a target said this way; it is exported so that loadgen's error samples quote it the
// same way, and a message that reaches the report is never a multi-line paste of a page.
func OneLine(s string, n int) string {
	var b strings.Builder
	space := false
	for _, r := range s {
		if unicode.IsControl(r) || unicode.IsSpace(r) {
			space = b.Len() > 0
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		if r == utf8.RuneError {
			r = '?'
		}
		if b.Len()+utf8.RuneLen(r) > n {
			return strings.TrimRight(b.String(), " ") + "..."
		}
		b.WriteRune(r)
	}
	return b.String()
}
