//go:build linux

package escape

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/dns/dnsmessage"

	"github.com/murmur/mur/internal/sandbox"
)

// Probes of capabilities.network.allow over raw TCP and UDP (issue #12
// items 3 and 4): a command reaches a granted plain-TCP or UDP service
// directly, by address or through the namespace's resolver, and nothing
// else; the HTTP proxy its variables name holds to the same list.
func init() {
	probes["raw_tcp_granted"] = func() error {
		for _, target := range []string{"127.0.0.1:" + os.Getenv("ALLOWED_PORT"), "localhost:" + os.Getenv("ALLOWED_PORT")} {
			if err := connectVia(target); err != nil {
				return fmt.Errorf("granted %s refused: %w", target, err)
			}
		}
		return nil
	}
	probes["raw_tcp_refused"] = func() error {
		for _, target := range []string{
			"127.0.0.1:" + os.Getenv("DENIED_PORT"), "[::1]:" + os.Getenv("DENIED_PORT"),
			"[::ffff:127.0.0.1]:" + os.Getenv("DENIED_PORT"), "192.0.2.10:80", "169.254.169.254:80",
		} {
			if err := connectVia(target); err == nil {
				return fmt.Errorf("reached %s", target)
			}
		}
		return nil
	}
	probes["raw_udp"] = func() error {
		got, err := udpExchange("127.0.0.1:"+os.Getenv("UDP_ALLOWED"), "ping")
		if err != nil || got != "echo:ping" {
			return fmt.Errorf("granted UDP %s: %q %v", os.Getenv("UDP_ALLOWED"), got, err)
		}
		for _, target := range []string{"127.0.0.1:" + os.Getenv("UDP_PORT"), "192.0.2.10:123"} {
			if got, err := udpExchange(target, "escaped"); err == nil {
				return fmt.Errorf("UDP %s answered %q", target, got)
			}
		}
		return nil
	}
	probes["resolver"] = func() error {
		// Whatever resolver a program is configured with, its port 53 is
		// the namespace's, which answers allowed names only.
		for _, server := range []string{"127.0.0.1:53", "192.0.2.53:53"} {
			if ips, err := dnsA(server, "localhost."); err != nil || !slices.Contains(ips, "127.0.0.1") {
				return fmt.Errorf("allowed name through %s: %v %v", server, ips, err)
			}
			if ips, err := dnsA(server, "metadata.google.internal."); err == nil {
				return fmt.Errorf("a refused name resolved through %s: %v", server, ips)
			}
		}
		return nil
	}
	probes["env_exact"] = func() error {
		// The caller set exactly netProbeEnv's names; the sandbox adds the
		// proxy variables (the documented deviation) and nothing else.
		for _, kv := range os.Environ() {
			k, _, _ := strings.Cut(kv, "=")
			if !slices.Contains(netProbeEnv, k) && !slices.Contains(proxyVars, k) {
				return fmt.Errorf("the command sees %s, which its caller did not set", kv)
			}
		}
		return nil
	}
	probes["proxy"] = func() error {
		// The proxy the variables name applies the same allow list.
		if err := connectProxy("localhost:" + os.Getenv("ALLOWED_PORT")); err != nil {
			return fmt.Errorf("granted target through the proxy: %w", err)
		}
		for _, target := range []string{"localhost:" + os.Getenv("DENIED_PORT"), "127.0.0.1:" + os.Getenv("DENIED_PORT"), "metadata.google.internal:80"} {
			if err := connectProxy(target); err == nil {
				return fmt.Errorf("reached %s through the proxy", target)
			}
		}
		return nil
	}
}

var proxyVars = []string{"http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "ALL_PROXY", "no_proxy", "NO_PROXY"}

// connectProxy opens a CONNECT tunnel through the proxy in HTTPS_PROXY and
// reads the target's greeting.
func connectProxy(target string) error {
	u, err := url.Parse(os.Getenv("HTTPS_PROXY"))
	if err != nil || u.Host == "" {
		return fmt.Errorf("no proxy: %q", os.Getenv("HTTPS_PROXY"))
	}
	c, err := net.DialTimeout("tcp", u.Host, 3*time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("proxy said %s", resp.Status)
	}
	if line, err := br.ReadString('\n'); err != nil || line != "hello\n" {
		return fmt.Errorf("no greeting through the tunnel: %q %v", line, err)
	}
	return nil
}

var netProbeEnv = []string{"ESCAPE_PROBE", "HOME", "TMPDIR", "ALLOWED_PORT", "DENIED_PORT", "UDP_PORT", "UDP_ALLOWED"}

// netProbe runs a sandboxed copy of this binary as the named probe, with
// exactly the variables netProbeEnv names.
func (f *fixture) netProbe(name string, udpAllowed int) string {
	self, _ := os.Executable()
	cmd := exec.Command(self)
	cmd.Env = []string{
		"ESCAPE_PROBE=" + name, "HOME=" + f.p.Home, "TMPDIR=" + f.p.Tmp,
		"ALLOWED_PORT=" + strconv.Itoa(f.allowed), "DENIED_PORT=" + strconv.Itoa(f.denied),
		"UDP_PORT=" + strconv.Itoa(f.udp.LocalAddr().(*net.UDPAddr).Port), "UDP_ALLOWED=" + strconv.Itoa(udpAllowed),
	}
	if err := f.s.Prepare(cmd); err != nil {
		f.t.Fatal(err)
	}
	r := f.run(cmd, f.s.Start)
	switch r.code() {
	case exitDenied:
		return ""
	case exitEscaped:
		return strings.TrimSpace(r.out)
	}
	return fmt.Sprintf("probe broke (exit %d, signal %v): %s", r.code(), r.signal(), r.out)
}

func udpExchange(target, msg string) (string, error) {
	c, err := net.Dial("udp", target)
	if err != nil {
		return "", err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := c.Write([]byte(msg)); err != nil {
		return "", err
	}
	buf := make([]byte, 1500)
	n, err := c.Read(buf)
	return string(buf[:n]), err
}

// dnsA asks server for name's IPv4 addresses; a name error is an error.
func dnsA(server, name string) ([]string, error) {
	b := dnsmessage.NewBuilder(nil, dnsmessage.Header{ID: 42, RecursionDesired: true})
	_ = b.StartQuestions()
	_ = b.Question(dnsmessage.Question{Name: dnsmessage.MustNewName(name), Type: dnsmessage.TypeA, Class: dnsmessage.ClassINET})
	q, err := b.Finish()
	if err != nil {
		return nil, err
	}
	c, err := net.Dial("udp", server)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(3 * time.Second))
	if _, err := c.Write(q); err != nil {
		return nil, err
	}
	buf := make([]byte, 1500)
	n, err := c.Read(buf)
	if err != nil {
		return nil, err
	}
	var m dnsmessage.Message
	if err := m.Unpack(buf[:n]); err != nil {
		return nil, err
	}
	if m.Header.RCode != dnsmessage.RCodeSuccess {
		return nil, fmt.Errorf("rcode %v", m.Header.RCode)
	}
	var out []string
	for _, a := range m.Answers {
		if r, ok := a.Body.(*dnsmessage.AResource); ok {
			out = append(out, net.IP(r.A[:]).String())
		}
	}
	return out, nil
}

// udpEcho answers every datagram on the host's loopback with "echo:" and it.
func udpEcho(t *testing.T) int {
	c, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	go func() {
		buf := make([]byte, 1500)
		for {
			n, from, err := c.ReadFrom(buf)
			if err != nil {
				return
			}
			_, _ = c.WriteTo(append([]byte("echo:"), buf[:n]...), from)
		}
	}()
	return c.LocalAddr().(*net.UDPAddr).Port
}

func TestEscapeNetwork(t *testing.T) {
	if os.Getenv("MUR_TEST_PRIVILEGED") != "1" {
		t.Skip("set MUR_TEST_PRIVILEGED=1 (make test-escape): the suite needs root and namespaces")
	}
	for _, class := range []sandbox.Class{sandbox.Scoped, sandbox.Sealed} {
		t.Run(class.String(), func(t *testing.T) {
			echo := udpEcho(t)
			f := newFixture(t, class, func(p *sandbox.Policy) {
				p.Network.Allow = append(p.Network.Allow, sandbox.AllowHost{Host: "localhost", Port: echo})
			})
			for _, name := range []string{"raw_tcp_granted", "raw_tcp_refused", "raw_udp", "resolver", "env_exact", "proxy"} {
				if v := f.netProbe(name, echo); v != "" {
					t.Errorf("%s: %s", name, v)
				}
			}
			// Nothing of the refused datagram reached the host's listener.
			buf := make([]byte, 64)
			_ = f.udp.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
			if n, _, err := f.udp.ReadFrom(buf); err == nil {
				t.Errorf("a refused datagram reached the host: %q", buf[:n])
			}
			// A real shell's raw TCP (bash's /dev/tcp), granted and not.
			for port, want := range map[int]string{f.allowed: "hello", f.denied: ""} {
				line := fmt.Sprintf("exec 3<>/dev/tcp/127.0.0.1/%d && head -n1 <&3", port)
				r := f.run(f.s.Command(context.Background(), "/bin/bash", "-c", line), f.s.Start)
				if got := strings.TrimSpace(r.out); !strings.HasPrefix(got, want) || want == "" && strings.Contains(got, "hello") {
					t.Errorf("/dev/tcp to port %d: %q, want %q", port, got, want)
				}
			}
		})
	}
}
