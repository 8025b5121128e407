package nethttp

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/murmur/mur/sdk/go/wasihttp"
)

func TestFromClient(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Header().Add("X-Seen", r.Method+" "+r.URL.RequestURI()+" "+string(b))
		w.Header().Add("X-Multi", strings.Join(r.Header.Values("X-Multi"), ","))
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusTeapot)
		io.WriteString(w, "short and stout")
	}))
	defer srv.Close()
	send := FromClient(srv.Client())
	resp, err := send(context.Background(), &wasihttp.Request{
		Method: http.MethodPost,
		URL:    srv.URL + "/pot?x=1",
		Header: wasihttp.Header{{"x-multi", "a"}, {"X-Multi", "b"}},
		Body:   strings.NewReader("tea"),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 418 || resp.Status != "418 I'm a teapot" || string(body) != "short and stout" {
		t.Fatalf("got %d %q %q", resp.StatusCode, resp.Status, body)
	}
	if got := resp.Header.Get("x-seen"); got != "POST /pot?x=1 tea" {
		t.Errorf("the server saw %q", got)
	}
	if got := resp.Header.Get("x-multi"); got != "a,b" {
		t.Errorf("repeated fields arrived as %q", got)
	}
	var names []string
	for _, kv := range resp.Header {
		names = append(names, kv[0])
	}
	if want := []string{"Content-Length", "Content-Type", "Date", "X-Multi", "X-Seen"}; !reflect.DeepEqual(names, want) {
		t.Errorf("field order %v, want %v", names, want)
	}
}

func TestFromClientErrors(t *testing.T) {
	send := FromClient(nil)
	if _, err := send(context.Background(), &wasihttp.Request{URL: "http://[::1"}); err == nil {
		t.Error("a malformed URL was sent")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := send(ctx, &wasihttp.Request{URL: "http://127.0.0.1:9/"}); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled context: %v", err)
	}
}
