package client

import (
	"encoding/json"
	"fmt"

	"github.com/tasksim/tasksim/internal/mcp"
)

// maxPages bounds the pages of one walk through a paginated list: a server whose cursors
// never end is reported, not followed forever.
const maxPages = 1000

// EachPage walks a paginated list (tools/list, tasks/list: method, sent by call) page by
// page, following nextCursor, and hands each page's result to page, which reports whether
// to go on. It fails on a transport or JSON-RPC error, a result that does not decode, a
// cursor the server already sent (the pages loop), or more than maxPages pages. It is
// exported for loadgen's reconciliation, which pages through tasks/list on a virtual
// client's session as the probe pages through tools/list.
func EachPage(op mcp.Op, call func(params []byte) (Reply, error), page func(result json.RawMessage) (more bool, err error)) error {
	method := op.Name()
	seen := map[string]bool{}
	params := []byte(`{}`)
	for n := 1; ; n++ {
		rep, err := call(params)
		if err == nil && rep.Err != nil {
			err = rep.Err
		}
		if err != nil {
			return fmt.Errorf("%s page %d: %w", method, n, err)
		}
		var next struct {
			NextCursor string `json:"nextCursor"`
		}
		if err := json.Unmarshal(rep.Result, &next); err != nil {
			return fmt.Errorf("%s page %d: %w", method, n, &ProtocolError{Msg: err.Error()})
		}
		more, err := page(rep.Result)
		switch c := next.NextCursor; {
		case err != nil:
			return fmt.Errorf("%s page %d: %w", method, n, err)
		case !more || c == "":
			return nil
		case seen[c]:
			return fmt.Errorf("%s page %d: %w", method, n, &ProtocolError{Msg: fmt.Sprintf("nextCursor %q was already sent: the pages loop", c)})
		case n == maxPages:
			return fmt.Errorf("%s: %w", method, &ProtocolError{Msg: fmt.Sprintf("more than %d pages", maxPages)})
		default:
			seen[c] = true
			params = append(append([]byte(`{"cursor":`), mcp.AppendString(nil, c)...), '}')
		}
	}
}
