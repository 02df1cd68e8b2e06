package main

import (
	"fmt"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// delayProxy listens on 127.0.0.1 and forwards each connection to the
// database, holding every chunk it reads for `oneWay` before writing it on:
// a network with a round-trip time of 2·oneWay between the service and the
// database, without a bandwidth limit (chunks are delayed, not serialized
// behind each other's delay). Loopback only: it never dials anything but the
// database's own address from the DSN.
type delayProxy struct {
	ln     net.Listener
	oneWay time.Duration
	dial   func() (net.Conn, error)
	wg     sync.WaitGroup
	mu     sync.Mutex
	conns  []net.Conn
}

// startDelayProxy starts a proxy to the database of dsn and returns it with
// a DSN that connects through it.
func startDelayProxy(dsn string, rtt time.Duration) (*delayProxy, string, error) {
	cfg, err := pgconn.ParseConfig(dsn)
	if err != nil {
		return nil, "", err
	}
	network, addr := "tcp", net.JoinHostPort(cfg.Host, fmt.Sprint(cfg.Port))
	if strings.HasPrefix(cfg.Host, "/") {
		network, addr = "unix", fmt.Sprintf("%s/.s.PGSQL.%d", cfg.Host, cfg.Port)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", err
	}
	p := &delayProxy{ln: ln, oneWay: rtt / 2, dial: func() (net.Conn, error) { return net.Dial(network, addr) }}
	p.wg.Add(1)
	go p.serve()
	port := ln.Addr().(*net.TCPAddr).Port
	out := fmt.Sprintf("host=127.0.0.1 port=%d user=%s dbname=%s sslmode=disable", port, quoteDSN(cfg.User), quoteDSN(cfg.Database))
	if cfg.Password != "" {
		out += " password=" + quoteDSN(cfg.Password)
	}
	return p, out, nil
}

func quoteDSN(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

func (p *delayProxy) serve() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		d, err := p.dial()
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, c, d)
		p.mu.Unlock()
		go p.pipe(d, c)
		go p.pipe(c, d)
	}
}

type chunk struct {
	b   []byte
	due time.Time
}

// pipe copies src to dst, each chunk `oneWay` after it was read.
func (p *delayProxy) pipe(dst, src net.Conn) {
	ch := make(chan chunk, 1024)
	go func() {
		defer close(ch)
		for {
			b := make([]byte, 32<<10)
			n, err := src.Read(b)
			if n > 0 {
				ch <- chunk{b[:n], time.Now().Add(p.oneWay)}
			}
			if err != nil {
				return
			}
		}
	}()
	for c := range ch {
		time.Sleep(time.Until(c.due))
		if _, err := dst.Write(c.b); err != nil {
			break
		}
	}
	dst.Close()
	src.Close()
	for range ch { // let the reader finish
	}
}

// Close stops the proxy and its connections.
func (p *delayProxy) Close() {
	p.ln.Close()
	p.wg.Wait()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
}
