package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// proc is a child process the run starts, kills and restarts: a service replica, a NATS node or
// the Postgres server. Children die with the harness (SIGKILL on the parent's death). A process
// that exits without the harness asking is restarted a second later, as an orchestrator would;
// the exit is recorded, and counted as a violation when the process had been ready.
type proc struct {
	name    string
	bin     string
	args    []string
	env     []string
	cred    *syscall.Credential
	logPath string
	// ready reports whether the started process serves (readyz, healthz, a ping).
	ready func(ctx context.Context) error

	mu       sync.Mutex
	cmd      *exec.Cmd
	exited   chan struct{}
	planned  bool
	wasReady bool
	stopping bool
	// crashes are the exits the harness did not cause, after the process had been ready.
	crashes []string
	// failedStarts are exits before the process became ready (a dependency down at start).
	failedStarts int
}

// start runs the process once; an unplanned exit restarts it.
func (p *proc) start() error {
	logf, err := os.OpenFile(p.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("%s: log: %w", p.name, err)
	}
	fmt.Fprintf(logf, "=== faultrun: start %s at %s\n", p.name, time.Now().Format(time.RFC3339Nano))
	cmd := exec.Command(p.bin, p.args...)
	cmd.Env = p.env
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Credential: p.cred}
	if err := cmd.Start(); err != nil {
		_ = logf.Close()
		return fmt.Errorf("%s: start: %w", p.name, err)
	}
	done := make(chan struct{})
	p.mu.Lock()
	p.cmd, p.exited, p.planned, p.wasReady = cmd, done, false, false
	p.mu.Unlock()
	go func() {
		werr := cmd.Wait()
		fmt.Fprintf(logf, "=== faultrun: %s exited at %s: %v\n", p.name, time.Now().Format(time.RFC3339Nano), werr)
		_ = logf.Close()
		p.mu.Lock()
		planned, ready, stopping := p.planned, p.wasReady, p.stopping
		if !planned && !stopping {
			if ready {
				p.crashes = append(p.crashes, fmt.Sprintf("%s exited on its own at %s (%v): %s",
					p.name, time.Now().Format("15:04:05.000"), werr, lastLine(p.logPath)))
			} else {
				p.failedStarts++
			}
		}
		p.mu.Unlock()
		close(done)
		if !planned && !stopping {
			time.Sleep(time.Second)
			p.mu.Lock()
			stopping = p.stopping
			p.mu.Unlock()
			if !stopping {
				if err := p.start(); err == nil {
					go func() { _ = p.waitReady(context.Background(), 2*time.Minute) }()
				}
			}
		}
	}()
	return nil
}

// waitReady polls ready until it succeeds or timeout passes, and marks the current start ready.
func (p *proc) waitReady(ctx context.Context, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	p.mu.Lock()
	done := p.exited
	p.mu.Unlock()
	for {
		if p.ready == nil || p.ready(ctx) == nil {
			p.mu.Lock()
			if p.exited == done {
				p.wasReady = true
			}
			p.mu.Unlock()
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s not ready within %s", p.name, timeout)
		case <-done:
			// A restart replaces done; keep polling the new process.
			p.mu.Lock()
			done = p.exited
			p.mu.Unlock()
			time.Sleep(100 * time.Millisecond)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// signal sends sig to the process as a planned stop and waits until it exited, killing it after
// timeout.
func (p *proc) signal(sig syscall.Signal, timeout time.Duration) error {
	p.mu.Lock()
	cmd, done := p.cmd, p.exited
	p.planned = true
	p.mu.Unlock()
	if cmd == nil || cmd.Process == nil {
		return errors.New(p.name + ": not started")
	}
	if err := cmd.Process.Signal(sig); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("%s: signal %s: %w", p.name, sig, err)
	}
	select {
	case <-done:
		return nil
	case <-time.After(timeout):
		_ = cmd.Process.Kill()
		<-done
		return fmt.Errorf("%s did not exit within %s of %s; killed", p.name, timeout, sig)
	}
}

// stop ends the process for good (no restart): sig, then SIGKILL after timeout.
func (p *proc) stop(sig syscall.Signal, timeout time.Duration) {
	p.mu.Lock()
	p.stopping = true
	cmd, done := p.cmd, p.exited
	p.mu.Unlock()
	if cmd == nil || cmd.Process == nil {
		return
	}
	select {
	case <-done:
		return
	default:
	}
	_ = cmd.Process.Signal(sig)
	select {
	case <-done:
	case <-time.After(timeout):
		_ = cmd.Process.Kill()
		<-done
	}
}

// pid is the running process's id, or 0.
func (p *proc) pid() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil || p.cmd.Process == nil {
		return 0
	}
	return p.cmd.Process.Pid
}

// report returns the crashes and the count of failed starts.
func (p *proc) report() ([]string, int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.crashes...), p.failedStarts
}

// lastLine is the last non-empty line of a log file, shortened, for crash reports.
func lastLine(path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(lines[i]); l != "" && !strings.HasPrefix(l, "=== faultrun") {
			if len(l) > 300 {
				l = l[:300] + "…"
			}
			return l
		}
	}
	return ""
}
