package sqlfront

import (
	"strconv"
	"strings"
)

// KillStmt is KILL session_id
// (https://learn.microsoft.com/en-us/sql/t-sql/language-elements/kill-transact-sql).
// Only the session_id form is modelled; KILL 'unit of work', KILL STATS
// JOB and KILL QUERY NOTIFICATION SUBSCRIPTION are answered as unsupported.
type KillStmt struct{ SPID int64 }

func (*KillStmt) stmtNode() {}

func (p *parser) killStatement() (Stmt, *SQLError) {
	p.i++
	t := p.peek()
	if t.kind != tokNumber {
		return nil, ErrUnsupported("KILL " + t.display())
	}
	p.i++
	n, err := strconv.ParseInt(t.text, 10, 64)
	if err != nil {
		return nil, ErrSyntaxNear(t.raw)
	}
	return &KillStmt{SPID: n}, nil
}

// BrokerStmt is a Service Broker statement (RECEIVE, WAITFOR (RECEIVE …),
// SEND, END CONVERSATION,
// https://learn.microsoft.com/en-us/sql/t-sql/statements/statements#service-broker).
// The stand-in has no queues and no conversations, so each is answered
// with SQL Server's error for the queue or conversation it names.
type BrokerStmt struct {
	Queue  string // RECEIVE … FROM queue
	Handle Expr   // SEND ON CONVERSATION / END CONVERSATION handle
}

func (*BrokerStmt) stmtNode() {}

// brokerStatement parses RECEIVE, WAITFOR (RECEIVE …), SEND ON
// CONVERSATION and END CONVERSATION far enough to name what they use.
func (p *parser) brokerStatement() (Stmt, *SQLError) {
	s := &BrokerStmt{}
	waitfor := p.accept("WAITFOR")
	if waitfor {
		if err := p.expectOp("("); err != nil {
			return nil, err
		}
	}
	switch {
	case p.accept("RECEIVE"):
		for !p.peek().is("FROM") {
			if p.peek().kind == tokEOF {
				return nil, p.fail()
			}
			p.i++
		}
		p.i++
		name, err := p.multiName()
		if err != nil {
			return nil, err
		}
		s.Queue = strings.Join(name, ".")
	case p.accept("SEND"):
		if err := p.expect("ON"); err != nil {
			return nil, err
		}
		if err := p.expect("CONVERSATION"); err != nil {
			return nil, err
		}
		h, err := p.primary()
		if err != nil {
			return nil, err
		}
		s.Handle = h
	case p.accept("END"):
		if err := p.expect("CONVERSATION"); err != nil {
			return nil, err
		}
		h, err := p.primary()
		if err != nil {
			return nil, err
		}
		s.Handle = h
	default:
		return nil, p.fail()
	}
	// the rest of the statement (message, INTO, WHERE, WITH, TIMEOUT)
	depth := 0
	if waitfor {
		depth = 1
	}
	for t := p.peek(); t.kind != tokEOF && !t.isOp(";") && (depth > 0 || !p.startsStatement()); t = p.peek() {
		switch {
		case t.isOp("("):
			depth++
		case t.isOp(")"):
			depth--
		}
		p.i++
	}
	return s, nil
}
