package main

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The calculator parses and evaluates arithmetic; it never runs code.
//
//	expr    = term { ("+" | "-") term }
//	term    = unary { ("*" | "/" | "%") unary }
//	unary   = ("-" | "+") unary | power
//	power   = primary [ "^" unary ]          (right-associative; -2^2 = -4)
//	primary = number | name | name "(" [ expr { "," expr } ] ")" | "(" expr ")"
//
// Names are the constants pi and e and the functions sqrt, abs, min, max,
// round, floor, ceil, ln, log10, sin, cos, tan.

const (
	maxExprLen = 1000 // bytes
	maxDepth   = 64   // nesting of parentheses, unary operators and powers
)

// CalcError is a syntax or evaluation error at a byte offset.
type CalcError struct {
	Pos int // byte offset in the expression
	Msg string
}

func (e *CalcError) Error() string { return fmt.Sprintf("at position %d: %s", e.Pos+1, e.Msg) }

var (
	errDivByZero = errors.New("division by zero")
	errEmpty     = errors.New("empty expression")
)

// Eval evaluates an arithmetic expression.
func Eval(expr string) (float64, error) {
	if len(expr) > maxExprLen {
		return 0, fmt.Errorf("expression longer than %d bytes", maxExprLen)
	}
	if strings.TrimSpace(expr) == "" {
		return 0, errEmpty
	}
	p := &parser{src: expr}
	p.next()
	v, err := p.expr()
	if err != nil {
		return 0, err
	}
	if p.tok.kind != tokEOF {
		return 0, p.errorf("unexpected %s", p.tok)
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, errors.New("the result is not a finite number")
	}
	return v, nil
}

type tokKind int

const (
	tokEOF tokKind = iota
	tokNum
	tokName
	tokOp // one of + - * / % ^ ( ) ,
	tokBad
)

type token struct {
	kind tokKind
	pos  int
	text string
	num  float64
}

func (t token) String() string {
	switch t.kind {
	case tokEOF:
		return "end of expression"
	case tokNum:
		return "number " + t.text
	case tokName:
		return "name " + strconv.Quote(t.text)
	case tokBad:
		if isDigit(t.text[0]) || t.text[0] == '.' {
			return "malformed number " + strconv.Quote(t.text)
		}
		return "character " + strconv.Quote(t.text)
	default:
		return strconv.Quote(t.text)
	}
}

type parser struct {
	src   string
	pos   int
	tok   token
	depth int
}

func (p *parser) errorf(format string, args ...any) error {
	return &CalcError{Pos: p.tok.pos, Msg: fmt.Sprintf(format, args...)}
}

// next scans the next token into p.tok.
func (p *parser) next() {
	for p.pos < len(p.src) && (p.src[p.pos] == ' ' || p.src[p.pos] == '\t' || p.src[p.pos] == '\n' || p.src[p.pos] == '\r') {
		p.pos++
	}
	start := p.pos
	if p.pos >= len(p.src) {
		p.tok = token{kind: tokEOF, pos: start}
		return
	}
	c := p.src[p.pos]
	switch {
	case c >= '0' && c <= '9' || c == '.':
		for p.pos < len(p.src) && (isDigit(p.src[p.pos]) || p.src[p.pos] == '.') {
			p.pos++
		}
		if p.pos < len(p.src) && (p.src[p.pos] == 'e' || p.src[p.pos] == 'E') {
			q := p.pos + 1
			if q < len(p.src) && (p.src[q] == '+' || p.src[q] == '-') {
				q++
			}
			if q < len(p.src) && isDigit(p.src[q]) {
				for q < len(p.src) && isDigit(p.src[q]) {
					q++
				}
				p.pos = q
			}
		}
		text := p.src[start:p.pos]
		v, err := strconv.ParseFloat(text, 64)
		if err != nil {
			p.tok = token{kind: tokBad, pos: start, text: text}
			return
		}
		p.tok = token{kind: tokNum, pos: start, text: text, num: v}
	case isLetter(c):
		for p.pos < len(p.src) && (isLetter(p.src[p.pos]) || isDigit(p.src[p.pos])) {
			p.pos++
		}
		p.tok = token{kind: tokName, pos: start, text: p.src[start:p.pos]}
	case strings.IndexByte("+-*/%^(),", c) >= 0:
		p.pos++
		p.tok = token{kind: tokOp, pos: start, text: string(c)}
	default:
		_, size := utf8.DecodeRuneInString(p.src[start:])
		p.pos += size
		p.tok = token{kind: tokBad, pos: start, text: p.src[start:p.pos]}
	}
}

func isDigit(c byte) bool  { return c >= '0' && c <= '9' }
func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' }

func (p *parser) isOp(s string) bool { return p.tok.kind == tokOp && p.tok.text == s }

func (p *parser) enter() error {
	p.depth++
	if p.depth > maxDepth {
		return p.errorf("expression nested more than %d levels deep", maxDepth)
	}
	return nil
}

func (p *parser) expr() (float64, error) {
	v, err := p.term()
	if err != nil {
		return 0, err
	}
	for p.isOp("+") || p.isOp("-") {
		op := p.tok.text
		p.next()
		w, err := p.term()
		if err != nil {
			return 0, err
		}
		if op == "+" {
			v += w
		} else {
			v -= w
		}
	}
	return v, nil
}

func (p *parser) term() (float64, error) {
	v, err := p.unary()
	if err != nil {
		return 0, err
	}
	for p.isOp("*") || p.isOp("/") || p.isOp("%") {
		op := p.tok
		p.next()
		w, err := p.unary()
		if err != nil {
			return 0, err
		}
		switch op.text {
		case "*":
			v *= w
		case "/":
			if w == 0 {
				return 0, &CalcError{Pos: op.pos, Msg: errDivByZero.Error()}
			}
			v /= w
		case "%":
			if w == 0 {
				return 0, &CalcError{Pos: op.pos, Msg: "modulo by zero"}
			}
			v = math.Mod(v, w)
		}
	}
	return v, nil
}

func (p *parser) unary() (float64, error) {
	if err := p.enter(); err != nil {
		return 0, err
	}
	defer func() { p.depth-- }()
	if p.isOp("-") || p.isOp("+") {
		neg := p.tok.text == "-"
		p.next()
		v, err := p.unary()
		if neg {
			v = -v
		}
		return v, err
	}
	return p.power()
}

func (p *parser) power() (float64, error) {
	base, err := p.primary()
	if err != nil {
		return 0, err
	}
	if !p.isOp("^") {
		return base, nil
	}
	p.next()
	exp, err := p.unary()
	if err != nil {
		return 0, err
	}
	return math.Pow(base, exp), nil
}

func (p *parser) primary() (float64, error) {
	switch t := p.tok; {
	case t.kind == tokNum:
		p.next()
		return t.num, nil
	case t.kind == tokName:
		p.next()
		if !p.isOp("(") {
			switch strings.ToLower(t.text) {
			case "pi":
				return math.Pi, nil
			case "e":
				return math.E, nil
			}
			return 0, &CalcError{Pos: t.pos, Msg: fmt.Sprintf("unknown name %q", t.text)}
		}
		return p.call(t)
	case p.isOp("("):
		if err := p.enter(); err != nil {
			return 0, err
		}
		defer func() { p.depth-- }()
		p.next()
		v, err := p.expr()
		if err != nil {
			return 0, err
		}
		if !p.isOp(")") {
			return 0, p.errorf("expected \")\", found %s", p.tok)
		}
		p.next()
		return v, nil
	case t.kind == tokEOF:
		return 0, p.errorf("unexpected end of expression")
	default:
		return 0, p.errorf("unexpected %s", t)
	}
}

// call parses the arguments of function f (the "(" is the current token)
// and applies it.
func (p *parser) call(f token) (float64, error) {
	if err := p.enter(); err != nil {
		return 0, err
	}
	defer func() { p.depth-- }()
	p.next() // "("
	var args []float64
	if !p.isOp(")") {
		for {
			v, err := p.expr()
			if err != nil {
				return 0, err
			}
			args = append(args, v)
			if !p.isOp(",") {
				break
			}
			p.next()
		}
	}
	if !p.isOp(")") {
		return 0, p.errorf("expected \",\" or \")\", found %s", p.tok)
	}
	p.next()
	return apply(f, args)
}

func apply(f token, args []float64) (float64, error) {
	name := strings.ToLower(f.text)
	one := func(fn func(float64) float64) (float64, error) {
		if len(args) != 1 {
			return 0, &CalcError{Pos: f.pos, Msg: fmt.Sprintf("%s takes 1 argument, got %d", name, len(args))}
		}
		return fn(args[0]), nil
	}
	switch name {
	case "sqrt":
		if len(args) == 1 && args[0] < 0 {
			return 0, &CalcError{Pos: f.pos, Msg: "square root of a negative number"}
		}
		return one(math.Sqrt)
	case "ln", "log10":
		if len(args) == 1 && args[0] <= 0 {
			return 0, &CalcError{Pos: f.pos, Msg: "logarithm of a number that is not positive"}
		}
		if name == "ln" {
			return one(math.Log)
		}
		return one(math.Log10)
	case "abs":
		return one(math.Abs)
	case "round":
		return one(math.Round)
	case "floor":
		return one(math.Floor)
	case "ceil":
		return one(math.Ceil)
	case "sin":
		return one(math.Sin)
	case "cos":
		return one(math.Cos)
	case "tan":
		return one(math.Tan)
	case "min", "max":
		if len(args) == 0 {
			return 0, &CalcError{Pos: f.pos, Msg: fmt.Sprintf("%s needs at least 1 argument", name)}
		}
		v := args[0]
		for _, a := range args[1:] {
			if name == "min" {
				v = math.Min(v, a)
			} else {
				v = math.Max(v, a)
			}
		}
		return v, nil
	}
	return 0, &CalcError{Pos: f.pos, Msg: fmt.Sprintf("unknown function %q", f.text)}
}

// formatNumber prints v without a trailing ".0" and without exponent for
// ordinary magnitudes.
func formatNumber(v float64) string {
	if v == 0 {
		v = 0 // no "-0"
	}
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}
