package command

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/wirecrawl/wire/pkg/collection"
)

// TestWithSignal: after a signal, a failure is the signal's; other
// outcomes keep their codes.
func TestWithSignal(t *testing.T) {
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(Interrupted{Signal: syscall.SIGTERM})
	tests := []struct {
		err  error
		want int
	}{
		{nil, ExitOK},
		{fmt.Errorf("gather batch 3: %w", context.Canceled), 143},
		{errors.New("disk on fire"), 143},
		{fmt.Errorf("lock: %w", collection.ErrLocked), ExitLocked},
		{fmt.Errorf("run: %w", collection.ErrNothingToDo), ExitNothingToDo},
		{fmt.Errorf("harvest: %w", context.Cause(ctx)), 143},
	}
	for _, tc := range tests {
		err := WithSignal(ctx, tc.err)
		if got := ExitCode(err); got != tc.want {
			t.Errorf("ExitCode(WithSignal(%v)) = %d, want %d", tc.err, got, tc.want)
		}
		if tc.want == 143 && strings.Count(err.Error(), "SIGTERM") != 1 {
			t.Errorf("message %q: want SIGTERM named once", err)
		}
	}
	if err := WithSignal(context.Background(), context.Canceled); ExitCode(err) != ExitFailure {
		t.Errorf("no signal: exit %d", ExitCode(err))
	}
}

// TestMainSignal runs Main in a child process (this test binary) with a
// command that waits for its context, signals it and checks the exit
// code and the message.
func TestMainSignal(t *testing.T) {
	if os.Getenv("WIRE_TEST_MAIN") == "1" {
		app := NewApp("waiter", "waits", &cli.Command{Name: "wait", Action: func(c *cli.Context) error {
			fmt.Println("ready")
			<-c.Context.Done()
			return fmt.Errorf("wait: %w", c.Context.Err())
		}})
		os.Args = []string{"waiter", "wait"}
		Main(app)
		return
	}
	for _, tc := range []struct {
		sig  syscall.Signal
		code int
		name string
	}{{syscall.SIGINT, 130, "SIGINT"}, {syscall.SIGTERM, 143, "SIGTERM"}} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestMainSignal$")
			cmd.Env = append(os.Environ(), "WIRE_TEST_MAIN=1")
			var stderr strings.Builder
			cmd.Stderr = &stderr
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			buf := make([]byte, 5)
			if _, err := out.Read(buf); err != nil {
				t.Fatal(err)
			}
			if err := cmd.Process.Signal(tc.sig); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case err = <-done:
			case <-time.After(10 * time.Second):
				cmd.Process.Kill()
				t.Fatal("the child did not stop")
			}
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != tc.code {
				t.Fatalf("exit: %v, want code %d; stderr %q", err, tc.code, stderr.String())
			}
			if want := "waiter: wait: context canceled (interrupted by " + tc.name + "; run again to resume)\n"; stderr.String() != want {
				t.Errorf("stderr %q, want %q", stderr.String(), want)
			}
		})
	}
}
