package main

import (
	"errors"
	"math"
	"strings"
	"testing"
)

func TestEval(t *testing.T) {
	tests := []struct {
		expr string
		want float64
	}{
		{"1+2", 3},
		{"1 + 2 * 3", 7},
		{"(1 + 2) * 3", 9},
		{"10 - 4 - 3", 3},
		{"2 ^ 3 ^ 2", 512}, // right-associative
		{"-2 ^ 2", -4},     // unary minus binds looser than ^
		{"2 ^ -1", 0.5},
		{"--3", 3},
		{"+4", 4},
		{"7 % 3", 1},
		{"-7 % 3", -1},
		{"10 / 4", 2.5},
		{"1.5e3 + .5", 1500.5},
		{"sqrt(16) + abs(-3)", 7},
		{"min(4, 2, 8) * max(1, 5)", 10},
		{"round(2.5) + floor(1.9) + ceil(1.1)", 6},
		{"SQRT(9)", 3},
		{"pi", math.Pi},
		{"2 * e", 2 * math.E},
		{"ln(e)", 1},
		{"log10(1000)", 3},
		{" ( ( 1 ) ) ", 1},
	}
	for _, tt := range tests {
		got, err := Eval(tt.expr)
		if err != nil {
			t.Errorf("Eval(%q) error: %v; want %v", tt.expr, err, tt.want)
			continue
		}
		if math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("Eval(%q) = %v; want %v", tt.expr, got, tt.want)
		}
	}
}

func TestEvalErrors(t *testing.T) {
	tests := []struct {
		expr, want string
	}{
		{"", "empty expression"},
		{"   ", "empty expression"},
		{"1 / 0", "at position 3: division by zero"},
		{"1 / (2 - 2)", "at position 3: division by zero"},
		{"5 % 0", "at position 3: modulo by zero"},
		{"1 +", "at position 4: unexpected end of expression"},
		{"(1 + 2", `at position 7: expected ")", found end of expression`},
		{"1 2", "at position 3: unexpected number 2"},
		{"2 $ 3", `at position 3: unexpected character "$"`},
		{"1.2.3", `at position 1: unexpected malformed number "1.2.3"`},
		{"(", "at position 2: unexpected end of expression"},
		{")", `at position 1: unexpected ")"`},
		{"foo", `at position 1: unknown name "foo"`},
		{"foo(1)", `at position 1: unknown function "foo"`},
		{"sqrt(1, 2)", "at position 1: sqrt takes 1 argument, got 2"},
		{"sqrt(-1)", "at position 1: square root of a negative number"},
		{"min()", "at position 1: min needs at least 1 argument"},
		{"max(1 2)", `at position 7: expected "," or ")", found number 2`},
		{"ln(0)", "at position 1: logarithm of a number that is not positive"},
		{"10 ^ 400", "the result is not a finite number"},
		{"é", `at position 1: unexpected character "é"`},
		{"1 \xff", `at position 3: unexpected character "\xff"`},
		{strings.Repeat("(", 100) + "1" + strings.Repeat(")", 100), "nested more than 64 levels deep"},
		{strings.Repeat("-", 100) + "1", "nested more than 64 levels deep"},
		{strings.Repeat("1+", 600) + "1", "expression longer than 1000 bytes"},
	}
	for _, tt := range tests {
		_, err := Eval(tt.expr)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Eval(%q) error = %v; want it to contain %q", tt.expr, err, tt.want)
		}
	}
	var ce *CalcError
	if _, err := Eval("1/0"); !errors.As(err, &ce) || ce.Pos != 1 {
		t.Errorf("Eval(1/0): got %#v; want a *CalcError at offset 1", err)
	}
}

func TestFormatNumber(t *testing.T) {
	tests := []struct {
		v    float64
		want string
	}{
		{7, "7"}, {-0.0, "0"}, {2.5, "2.5"}, {1e20, "1e+20"}, {123456789, "123456789"}, {1.0 / 3, "0.3333333333333333"},
	}
	for _, tt := range tests {
		if got := formatNumber(tt.v); got != tt.want {
			t.Errorf("formatNumber(%v) = %q; want %q", tt.v, got, tt.want)
		}
	}
}

// FuzzEval checks that no input makes the calculator panic, loop or
// return a non-finite value without an error.
func FuzzEval(f *testing.F) {
	for _, s := range []string{"1+2*3", "-(2^3)%5", "sqrt(min(1,2,3))", "((((1))))", "1e308*10", "pi*e", "1..2", "max(,)"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, expr string) {
		v, err := Eval(expr)
		if err == nil && (math.IsNaN(v) || math.IsInf(v, 0)) {
			t.Errorf("Eval(%q) = %v with no error", expr, v)
		}
	})
}
