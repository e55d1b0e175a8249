import CopyWebpackPlugin from 'copy-webpack-plugin';
import type { Configuration } from 'webpack';
import { merge } from 'webpack-merge';
import grafanaConfig, { type Env } from './.config/webpack/webpack.config';

// The scaffold copies only the app's own logos; the nested datasource and
// panel keep theirs in src/<plugin>/img, which Grafana resolves relative to
// each nested plugin's directory.
const config = async (env: Env): Promise<Configuration> => {
  const baseConfig = await grafanaConfig(env);
  return merge(baseConfig, {
    plugins: [
      new CopyWebpackPlugin({
        patterns: [{ from: '*/img/*.svg', to: '.' }],
      }),
    ],
  });
};

export default config;
