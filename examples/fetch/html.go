package main

import (
	"html"
	"strings"
)

// paraTags end a paragraph (a blank line after them); blockTags start a
// new line; the others are inline.
var paraTags = map[string]bool{
	"p": true, "h1": true, "h2": true, "h3": true, "h4": true, "h5": true, "h6": true, "title": true,
	"pre": true, "blockquote": true, "table": true, "ul": true, "ol": true, "dl": true, "figure": true,
}

var blockTags = map[string]bool{
	"address": true, "article": true, "aside": true, "blockquote": true, "br": true, "dd": true, "div": true,
	"dl": true, "dt": true, "fieldset": true, "figcaption": true, "figure": true, "footer": true, "form": true,
	"h1": true, "h2": true, "h3": true, "h4": true, "h5": true, "h6": true, "header": true, "hr": true,
	"li": true, "main": true, "nav": true, "ol": true, "p": true, "pre": true, "section": true, "table": true,
	"tr": true, "ul": true, "title": true, "body": true, "html": true,
}

// skipTags have content that is not text.
var skipTags = map[string]bool{"script": true, "style": true, "noscript": true, "template": true, "svg": true}

// htmlToText reduces an HTML document to readable text: tags dropped,
// block elements on their own lines, list items bulleted, scripts, styles
// and comments removed, entities decoded, whitespace collapsed. It is a
// heuristic for reading pages, not an HTML parser.
func htmlToText(doc string) string {
	doc = strings.ReplaceAll(doc, "\f", " ")
	var b strings.Builder
	i := 0
	for i < len(doc) {
		lt := strings.IndexByte(doc[i:], '<')
		if lt < 0 {
			b.WriteString(html.UnescapeString(doc[i:]))
			break
		}
		b.WriteString(html.UnescapeString(doc[i : i+lt]))
		i += lt
		if strings.HasPrefix(doc[i:], "<!--") {
			end := strings.Index(doc[i+4:], "-->")
			if end < 0 {
				break
			}
			i += 4 + end + 3
			continue
		}
		if i+1 >= len(doc) || !startsTag(doc[i+1]) {
			b.WriteByte('<') // "a < b" is text
			i++
			continue
		}
		end := tagEnd(doc, i)
		if end < 0 {
			b.WriteString(html.UnescapeString(doc[i:])) // a stray '<'
			break
		}
		name, closing := tagName(doc[i+1 : end])
		i = end + 1
		switch {
		case name == "":
			b.WriteString(" ")
		case skipTags[name] && !closing:
			stop := strings.Index(strings.ToLower(doc[i:]), "</"+name)
			if stop < 0 {
				i = len(doc)
				continue
			}
			i += stop
		case name == "li" && !closing:
			b.WriteString("\n- ")
		case closing && paraTags[name]:
			b.WriteString(paraBreak)
		case blockTags[name]:
			b.WriteString("\n")
		case name == "td" || name == "th":
			b.WriteString(" ")
		}
	}
	return tidy(b.String())
}

// startsTag reports whether c can follow '<' in a tag, comment or
// declaration.
func startsTag(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '/' || c == '!' || c == '?'
}

// tagEnd returns the index of the '>' ending the tag that starts at i,
// skipping quoted attribute values, or -1.
func tagEnd(doc string, i int) int {
	var quote byte
	for j := i + 1; j < len(doc); j++ {
		c := doc[j]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '>':
			return j
		}
	}
	return -1
}

// tagName returns the lower-case name of a tag body ("/p", "br/", "a
// href=…") and whether it closes an element.
func tagName(body string) (string, bool) {
	closing := strings.HasPrefix(body, "/")
	body = strings.TrimPrefix(body, "/")
	n := 0
	for n < len(body) && (body[n] >= 'a' && body[n] <= 'z' || body[n] >= 'A' && body[n] <= 'Z' || body[n] >= '0' && body[n] <= '9') {
		n++
	}
	return strings.ToLower(body[:n]), closing
}

// paraBreak marks the end of a paragraph; tidy turns it into one empty
// line. (Form feeds in the input are replaced first.)
const paraBreak = "\n\f\n"

// tidy collapses runs of blanks inside lines, drops empty lines, and puts
// one empty line at each paragraph break.
func tidy(s string) string {
	var out []string
	blank := false
	for line := range strings.SplitSeq(s, "\n") {
		if line == "\f" {
			if len(out) > 0 && !blank {
				out = append(out, "")
			}
			blank = true
			continue
		}
		line = strings.Join(strings.Fields(line), " ")
		if line == "" || line == "-" {
			continue
		}
		out = append(out, line)
		blank = false
	}
	for len(out) > 0 && out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	return strings.Join(out, "\n")
}
