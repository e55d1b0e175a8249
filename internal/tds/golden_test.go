package tds

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Golden token streams: the exact tokens and DONE status bits the server
// sends for typical requests, rendered one token per line. Re-record with
// go test -run TestGoldenTokenStreams -update.

func TestGoldenTokenStreams(t *testing.T) {
	_, addr := startServer(t, newTestHandler())
	c := dialRaw(t, addr)
	login := c.login(4096)
	type request struct {
		name    string
		typ     packetType
		payload []byte
	}
	rpc := func(stmt string, args ...[]byte) []byte {
		p := append(allHeaders(0), 0xFF, 0xFF, byte(ProcIDExecuteSQL), 0, 0, 0)
		stmtParam := append([]byte{0, 0, tdsNVarChar}, appendU16(nil, 8000)...)
		stmtParam = append(stmtParam, defaultCollation[:]...)
		u := ucs2(stmt)
		stmtParam = append(appendU16(stmtParam, uint16(len(u))), u...)
		p = append(p, stmtParam...)
		for _, a := range args {
			p = append(p, a...)
		}
		return p
	}
	intArg, _ := appendBVarChar(nil, "@p1")
	intArg = append(intArg, 0, tdsIntN, 4, 4, 7, 0, 0, 0)
	tmBegin := append(allHeaders(0), 5, 0, 0, 0)
	reqs := []request{
		{"login", 0, nil},
		{"batch-select-multi", packetSQLBatch, batchPayload("select multi")},
		{"batch-error-then-rows", packetSQLBatch, batchPayload("error then rows")},
		{"batch-raise-error", packetSQLBatch, batchPayload("raise error")},
		{"batch-print-info", packetSQLBatch, batchPayload("print info")},
		{"batch-use", packetSQLBatch, batchPayload("use otherdb")},
		{"rpc-update", packetRPC, rpc("update via rpc", intArg)},
		{"rpc-echo", packetRPC, rpc("select echo", intArg)},
		{"rpc-error", packetRPC, rpc("raise error via rpc")},
		{"tm-begin", packetTransMgr, tmBegin},
		{"batch-in-transaction", packetSQLBatch, append(allHeaders(1), ucs2("update 2")...)},
		{"tm-rollback", packetTransMgr, append(allHeaders(1), 8, 0, 0, 0)},
		{"attention-idle", packetAttention, nil},
	}
	for _, r := range reqs {
		var reply []byte
		if r.typ == 0 {
			reply = login.payload
		} else {
			c.send(r.typ, statusEOM, r.payload, 4096)
			reply = c.mustRead().payload
		}
		got, err := renderTokens(reply)
		if err != nil {
			t.Errorf("%s: %v\n%s", r.name, err, got)
			continue
		}
		path := filepath.Join("testdata", "golden", r.name+".txt")
		if *update {
			os.MkdirAll(filepath.Dir(path), 0o755)
			if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%s: %v (run with -update to record)", r.name, err)
		}
		if got != string(want) {
			t.Errorf("%s: token stream differs from %s\ngot:\n%s\nwant:\n%s", r.name, path, got, want)
		}
	}
}

// renderTokens describes a reply one token per line. It knows the column
// types the golden requests use (int, intN, nvarchar).
func renderTokens(p []byte) (string, error) {
	var out strings.Builder
	r := &reader{b: p}
	var cols []wireType
	doneNames := map[byte]string{tokenDone: "DONE", tokenDoneProc: "DONEPROC", tokenDoneInProc: "DONEINPROC"}
	for r.remaining() > 0 {
		tok := r.u8("token")
		switch tok {
		case tokenDone, tokenDoneProc, tokenDoneInProc:
			status, cmd, rows := r.u16("status"), r.u16("cmd"), r.u64("rows")
			fmt.Fprintf(&out, "%s status=%s cmd=%#x rows=%d\n", doneNames[tok], doneBits(status), cmd, rows)
		case tokenError, tokenInfo:
			body := &reader{b: r.take("message", int(r.u16("length")))}
			num, state, class := int32(body.u32("number")), body.u8("state"), body.u8("class")
			msg, server, proc, line := body.usVarChar("text"), body.bVarChar("server"), body.bVarChar("proc"), int32(body.u32("line"))
			name := map[byte]string{tokenError: "ERROR", tokenInfo: "INFO"}[tok]
			fmt.Fprintf(&out, "%s %d state=%d class=%d server=%q proc=%q line=%d %q\n", name, num, state, class, server, proc, line, msg)
		case tokenEnvChange:
			body := r.take("envchange", int(r.u16("length")))
			fmt.Fprintf(&out, "ENVCHANGE type=%d % x\n", body[0], body[1:])
		case tokenLoginAck:
			body := r.take("loginack", int(r.u16("length")))
			fmt.Fprintf(&out, "LOGINACK tds=%#08x %q version=%d.%d.%d\n", binary.BigEndian.Uint32(body[1:]),
				decodeUTF16(body[6:len(body)-4]), body[len(body)-4], body[len(body)-3], binary.BigEndian.Uint16(body[len(body)-2:]))
		case tokenReturnStatus:
			fmt.Fprintf(&out, "RETURNSTATUS %d\n", int32(r.u32("status")))
		case tokenColMetadata:
			n := int(r.u16("count"))
			cols = cols[:0]
			var names []string
			for i := 0; i < n; i++ {
				r.u32("usertype")
				flags := r.u16("flags")
				wt, err := decodeTypeInfo(r)
				if err != nil {
					return out.String(), err
				}
				cols = append(cols, wt)
				names = append(names, fmt.Sprintf("%s %v flags=%#x", r.bVarChar("name"), wt.TypeInfo, flags))
			}
			fmt.Fprintf(&out, "COLMETADATA [%s]\n", strings.Join(names, ", "))
		case tokenRow, tokenNBCRow:
			var bitmap []byte
			if tok == tokenNBCRow {
				bitmap = r.take("null bitmap", (len(cols)+7)/8)
			}
			var vals []string
			for i, col := range cols {
				if bitmap != nil && bitmap[i/8]&(1<<(i%8)) != 0 {
					vals = append(vals, "NULL")
					continue
				}
				v, err := col.decodeValue(r)
				if err != nil {
					return out.String(), err
				}
				vals = append(vals, fmt.Sprintf("%v", v))
			}
			name := map[byte]string{tokenRow: "ROW", tokenNBCRow: "NBCROW"}[tok]
			fmt.Fprintf(&out, "%s %s\n", name, strings.Join(vals, " | "))
		default:
			return out.String(), fmt.Errorf("unknown token %#x at %d", tok, r.off-1)
		}
		if r.err != nil {
			return out.String(), r.err
		}
	}
	return out.String(), nil
}

func doneBits(s uint16) string {
	var parts []string
	for _, b := range []struct {
		bit  uint16
		name string
	}{{doneMore, "MORE"}, {doneError, "ERROR"}, {doneInXact, "INXACT"}, {doneCount, "COUNT"}, {doneAttn, "ATTN"}, {doneSrvError, "SRVERROR"}} {
		if s&b.bit != 0 {
			parts = append(parts, b.name)
		}
	}
	if len(parts) == 0 {
		return "0"
	}
	return strings.Join(parts, "|")
}
