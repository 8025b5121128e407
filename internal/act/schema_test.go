package act

import (
	"errors"
	"sync"
	"testing"
)

// TestSchemaCheckedAgainstMetaSchema: a parameters-schema is refused when
// its draft's meta-schema refuses it, from several goroutines at once
// (a capsule's components bind concurrently).
func TestSchemaCheckedAgainstMetaSchema(t *testing.T) {
	cases := []struct {
		schema string
		ok     bool
	}{
		{`{"type":"object","properties":{"k":{"type":"string","minLength":1}},"required":["k"]}`, true},
		{`{"type":5}`, false},
		{`{"type":"object","properties":{"k":{"minLength":"one"}}}`, false},
		{`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","required":"k"}`, false},
		{`{"$schema":"http://json-schema.org/draft-04/schema#","type":"number","exclusiveMinimum":true,"minimum":0}`, true},
		{`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"number","exclusiveMinimum":true}`, false},
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8*len(cases))
	for range 8 {
		for _, c := range cases {
			wg.Go(func() {
				_, err := New(Options{Name: "test/schema"}, []ToolDefinition{{Name: "t", ParametersSchema: c.schema}})
				switch {
				case c.ok && err != nil:
					errs <- err
				case !c.ok && !errors.Is(err, ErrSchema):
					errs <- errors.New(c.schema + " was not refused as ErrSchema: " + errString(err))
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func errString(err error) string {
	if err == nil {
		return "accepted"
	}
	return err.Error()
}

// FuzzSchema: a component's parameters-schema and the model's arguments
// are both untrusted; compiling the one and checking the other must
// return, never panic.
func FuzzSchema(f *testing.F) {
	f.Add(`{"type":"object","properties":{"k":{"type":"string"}},"required":["k"]}`, `{"k":"v"}`)
	f.Add(`{"$defs":{"a":{"$ref":"#/$defs/a"}},"$ref":"#/$defs/a"}`, `1`)
	f.Add(`{"$schema":"http://json-schema.org/draft-04/schema#","items":[{"type":"integer"}],"additionalItems":false}`, `[1,"x"]`)
	f.Add(`{"pattern":"^(a+)+$","format":"email"}`, `"aaaa"`)
	f.Add(`{"$dynamicRef":"#meta","$dynamicAnchor":"meta"}`, `{}`)
	f.Fuzz(func(t *testing.T, schema, input string) {
		c, err := New(Options{Name: "test/fuzz"}, []ToolDefinition{{Name: "t", ParametersSchema: schema}})
		if err != nil {
			if !errors.Is(err, ErrSchema) {
				t.Fatalf("schema %q refused without ErrSchema: %v", schema, err)
			}
			return
		}
		_ = c.validate("t", []byte(input))
	})
}
