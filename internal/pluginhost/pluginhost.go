// Package pluginhost launches a built backend plugin binary the way Grafana
// does — hashicorp/go-plugin with the SDK's grpcplugin handshake — and hands
// back typed gRPC clients. It exists for end-to-end tests of
// cmd/gpx_queryreplay; it must not be imported by production code.
//
// Grafana itself does the same in pkg/plugins/backendplugin/grpcplugin; the
// SDK has no host package, so this is the small piece we write ourselves.
package pluginhost

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/backend/grpcplugin"
	"github.com/grafana/grafana-plugin-sdk-go/genproto/pluginv2"
	"github.com/hashicorp/go-hclog"
	goplugin "github.com/hashicorp/go-plugin"
)

// Host is one running plugin process.
type Host struct {
	client *goplugin.Client
	rpc    goplugin.ClientProtocol
}

// Options tune the launch.
type Options struct {
	// Env is added to the child's environment (Grafana adds GF_VERSION and
	// friends).
	Env []string
	// StartTimeout bounds the handshake; 0 means 10 s.
	StartTimeout time.Duration
	// Log receives the plugin's log lines; nil discards them.
	Log io.Writer
}

// Start launches binary and completes the go-plugin handshake. The caller
// must Close the host.
func Start(binary string, opts Options) (*Host, error) {
	if _, err := os.Stat(binary); err != nil {
		return nil, fmt.Errorf("plugin binary: %w", err)
	}
	if opts.StartTimeout == 0 {
		opts.StartTimeout = 10 * time.Second
	}
	logOut := opts.Log
	if logOut == nil {
		logOut = io.Discard
	}
	cmd := exec.Command(binary)
	cmd.Env = append(os.Environ(), opts.Env...)
	client := goplugin.NewClient(&goplugin.ClientConfig{
		HandshakeConfig: goplugin.HandshakeConfig{
			ProtocolVersion:  grpcplugin.ProtocolVersion,
			MagicCookieKey:   grpcplugin.MagicCookieKey,
			MagicCookieValue: grpcplugin.MagicCookieValue,
		},
		VersionedPlugins: map[int]goplugin.PluginSet{
			grpcplugin.ProtocolVersion: {
				"diagnostics": &grpcplugin.DiagnosticsGRPCPlugin{},
				"resource":    &grpcplugin.ResourceGRPCPlugin{},
				"data":        &grpcplugin.DataGRPCPlugin{},
				"stream":      &grpcplugin.StreamGRPCPlugin{},
			},
		},
		Cmd:              cmd,
		AllowedProtocols: []goplugin.Protocol{goplugin.ProtocolGRPC},
		StartTimeout:     opts.StartTimeout,
		Logger:           hclog.New(&hclog.LoggerOptions{Name: "plugin", Output: logOut, Level: hclog.Debug}),
	})
	rpc, err := client.Client()
	if err != nil {
		client.Kill()
		return nil, fmt.Errorf("plugin handshake with %s: %w", binary, err)
	}
	return &Host{client: client, rpc: rpc}, nil
}

// Close kills the plugin process.
func (h *Host) Close() { h.client.Kill() }

// Exited reports whether the plugin process has ended.
func (h *Host) Exited() bool { return h.client.Exited() }

func dispense[T any](h *Host, name string) (T, error) {
	var zero T
	raw, err := h.rpc.Dispense(name)
	if err != nil {
		return zero, fmt.Errorf("dispense %s: %w", name, err)
	}
	c, ok := raw.(T)
	if !ok {
		return zero, fmt.Errorf("dispense %s: unexpected client type %T", name, raw)
	}
	return c, nil
}

// CheckHealth calls Diagnostics.CheckHealth over gRPC.
func (h *Host) CheckHealth(ctx context.Context, pctx backend.PluginContext) (*backend.CheckHealthResult, error) {
	c, err := dispense[grpcplugin.DiagnosticsClient](h, "diagnostics")
	if err != nil {
		return nil, err
	}
	resp, err := c.CheckHealth(ctx, &pluginv2.CheckHealthRequest{PluginContext: backend.ToProto().PluginContext(pctx)})
	if err != nil {
		return nil, fmt.Errorf("CheckHealth: %w", err)
	}
	return backend.FromProto().CheckHealthResponse(resp), nil
}

// QueryData calls Data.QueryData over gRPC.
func (h *Host) QueryData(ctx context.Context, req *backend.QueryDataRequest) (*backend.QueryDataResponse, error) {
	c, err := dispense[grpcplugin.DataClient](h, "data")
	if err != nil {
		return nil, err
	}
	resp, err := c.QueryData(ctx, backend.ToProto().QueryDataRequest(req))
	if err != nil {
		return nil, fmt.Errorf("QueryData: %w", err)
	}
	out, err := backend.FromProto().QueryDataResponse(resp)
	if err != nil {
		return nil, fmt.Errorf("QueryData: decode response: %w", err)
	}
	return out, nil
}

// CallResource calls Resource.CallResource over gRPC and gathers the
// streamed response: the status and headers of the first message, the body
// of all of them.
func (h *Host) CallResource(ctx context.Context, req *backend.CallResourceRequest) (*backend.CallResourceResponse, error) {
	c, err := dispense[grpcplugin.ResourceClient](h, "resource")
	if err != nil {
		return nil, err
	}
	stream, err := c.CallResource(ctx, backend.ToProto().CallResourceRequest(req))
	if err != nil {
		return nil, fmt.Errorf("CallResource: %w", err)
	}
	var out *backend.CallResourceResponse
	for {
		msg, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("CallResource: %w", err)
		}
		r := backend.FromProto().CallResourceResponse(msg)
		if out == nil {
			out = r
		} else {
			out.Body = append(out.Body, r.Body...)
		}
	}
	if out == nil {
		return nil, errors.New("CallResource: the plugin sent no response")
	}
	return out, nil
}

// SubscribeStream calls Stream.SubscribeStream over gRPC, as Grafana Live
// does for each subscriber of a plugin channel.
func (h *Host) SubscribeStream(ctx context.Context, pctx backend.PluginContext, path string) (pluginv2.SubscribeStreamResponse_Status, error) {
	c, err := dispense[grpcplugin.StreamClient](h, "stream")
	if err != nil {
		return 0, err
	}
	resp, err := c.SubscribeStream(ctx, &pluginv2.SubscribeStreamRequest{PluginContext: backend.ToProto().PluginContext(pctx), Path: path})
	if err != nil {
		return 0, fmt.Errorf("SubscribeStream: %w", err)
	}
	return resp.Status, nil
}

// RunStream calls Stream.RunStream over gRPC, as Grafana Live does once per
// channel, and hands each packet's data to onPacket until the plugin ends
// the stream (nil) or ctx ends (the error says so). Cancelling ctx is what
// Grafana does when the channel's last subscriber leaves.
func (h *Host) RunStream(ctx context.Context, pctx backend.PluginContext, path string, onPacket func([]byte)) error {
	c, err := dispense[grpcplugin.StreamClient](h, "stream")
	if err != nil {
		return err
	}
	stream, err := c.RunStream(ctx, &pluginv2.RunStreamRequest{PluginContext: backend.ToProto().PluginContext(pctx), Path: path})
	if err != nil {
		return fmt.Errorf("RunStream: %w", err)
	}
	for {
		msg, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("RunStream: %w", err)
		}
		onPacket(msg.Data)
	}
}
