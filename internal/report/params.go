package report

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Param is one run parameter. Value is what JSON carries (numbers in bytes,
// counts, booleans); Display is what the parameter line shows.
type Param struct {
	Key     string
	Label   string
	Value   any
	Display string
}

// Switch is the parameter of an on/off switch: on the parameter line as
// its label alone when on, left off the line when off; JSON has it either
// way.
func Switch(key, label string, on bool) Param {
	if !on {
		label = ""
	}
	return Param{Key: key, Label: label, Value: on, Display: "on"}
}

// ParamText is how a parameter is shown: what JSON does not keep.
type ParamText struct {
	Key     string `json:"key"`
	Label   string `json:"label,omitempty"`
	Display string `json:"display,omitempty"`
}

// Texts returns the labels and displays of p, for sending beside its JSON.
func (p Params) Texts() []ParamText {
	out := make([]ParamText, len(p))
	for i, x := range p {
		out[i] = ParamText{Key: x.Key, Label: x.Label, Display: x.Display}
	}
	return out
}

// SetTexts restores the labels and displays that Texts returned to the
// parameters of the same keys.
func (p Params) SetTexts(texts []ParamText) {
	for _, t := range texts {
		for i := range p {
			if p[i].Key == t.Key {
				p[i].Label, p[i].Display = t.Label, t.Display
			}
		}
	}
}

// Params is an ordered list of parameters. In JSON it is an object whose
// keys keep their order.
type Params []Param

// Get returns the value of key, or nil.
func (p Params) Get(key string) any {
	for _, x := range p {
		if x.Key == key {
			return x.Value
		}
	}
	return nil
}

// MarshalJSON writes the parameters as one object, in order.
func (p Params) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, x := range p {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := json.Marshal(x.Key)
		if err != nil {
			return nil, err
		}
		v, err := json.Marshal(x.Value)
		if err != nil {
			return nil, fmt.Errorf("parameter %s: %w", x.Key, err)
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// UnmarshalJSON reads an object written by MarshalJSON, keeping key order.
// Labels and displays are not stored in JSON; Display is the value's text.
func (p *Params) UnmarshalJSON(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		if tok == nil {
			*p = nil
			return nil
		}
		return fmt.Errorf("parameters: want an object")
	}
	var out Params
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		key, _ := tok.(string)
		var v any
		if err := dec.Decode(&v); err != nil {
			return fmt.Errorf("parameter %s: %w", key, err)
		}
		out = append(out, Param{Key: key, Label: key, Value: v, Display: fmt.Sprint(v)})
	}
	*p = out
	return nil
}
