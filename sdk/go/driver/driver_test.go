package driver

import (
	"errors"
	"reflect"
	"testing"

	"github.com/murmur/mur/sdk/go/tool"
)

func TestServe(t *testing.T) {
	tests := []struct {
		name  string
		reply Reply
		err   error
		want  tool.Result
	}{
		{"plain", Reply{Data: `{"text":"hi"}`}, nil, tool.Passed(`{"text":"hi"}`)},
		{"continuation", Reply{Data: "d", ContinuationID: "resp_1", Metadata: [][2]string{{"k", "v"}}}, nil,
			tool.Passed("d").With("continuation_id", "resp_1").With("k", "v")},
		{"error", Reply{}, errors.New("provider said 529"), tool.Errorf("provider said 529")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := serve(func(*Call) (Reply, error) { return tt.reply, tt.err }, &Call{})
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestNewCall(t *testing.T) {
	t.Setenv("MURMUR_INFERENCE_ENDPOINT", "http://127.0.0.1:9/v1//")
	t.Setenv("MURMUR_INFERENCE_MODEL", "m-1")
	data, log := `{"messages":[]}`, "/logs/d.log"
	c := newCall(tool.Input{Data: &data, LogPath: &log})
	if string(c.Request) != data || c.LogPath != log || c.Endpoint != "http://127.0.0.1:9/v1" || c.Model != "m-1" || c.Client == nil {
		t.Errorf("newCall = %+v", c)
	}
	if err := c.Emit("x"); err != nil {
		t.Errorf("Emit on the host = %v", err)
	}
}
