package driver

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"

	"github.com/murmur/mur/sdk/go/tool"
	"github.com/murmur/mur/sdk/go/wasihttp"
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
	if string(c.Request) != data || c.LogPath != log || c.Endpoint != "http://127.0.0.1:9/v1" || c.Model != "m-1" || c.Send == nil {
		t.Errorf("newCall = %+v", c)
	}
	if err := c.Emit("x"); err != nil {
		t.Errorf("Emit on the host = %v", err)
	}
}

func TestNewCallSendsOnTheHost(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: "+r.Header.Get("X-Model")+"\n\n")
	}))
	defer srv.Close()
	t.Setenv("MURMUR_INFERENCE_ENDPOINT", srv.URL)
	c := newCall(tool.Input{})
	resp, err := c.Send(context.Background(), &wasihttp.Request{URL: c.Endpoint + "/v1/complete", Header: wasihttp.Header{{"x-model", "m-1"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	for ev, err := range Events(resp.Body) {
		if err != nil || ev.Data != "m-1" {
			t.Fatalf("event %+v, %v", ev, err)
		}
		return
	}
	t.Fatal("no event")
}
