//! Drives the Autobahn fuzzing server's protocol with peregrine's WebSocket client: asks how
//! many cases there are (`/getCaseCount`), runs each (`/runCase?case=N&agent=AGENT`: every
//! text and binary message echoed until the server closes), then asks for the reports
//! (`/updateReports?agent=AGENT`). permessage-deflate is offered, every message compressed.
//!
//! ```text
//! kosoku -m fuzzingserver 127.0.0.1:9001 &
//! cargo run --release --example ws_autobahn_client -- ws://127.0.0.1:9001 peregrine
//! ```

use peregrine::client::Client;
use peregrine::websocket::{Config, DeflateConfig, Message};

/// Every message compressed (see `ws_echo.rs` for why the Autobahn runner needs it), and the
/// offer says `client_no_context_takeover` (RFC 7692 §7.1.1.2): Autobahn's servers for cases
/// 13.2, 13.5 and 13.6 agree to compression only with a client that hints it will reset its
/// context after each message.
fn config() -> Config {
    let deflate =
        DeflateConfig { min_size: 0, client_no_context_takeover: true, ..DeflateConfig::default() };
    Config { deflate: Some(deflate), ..Config::default() }
}

async fn case_count(client: &Client, base: &str) -> Result<u32, Box<dyn std::error::Error>> {
    let mut ws = client.websocket(&format!("{base}/getCaseCount")).connect().await?;
    let mut count = None;
    while let Some(msg) = ws.recv().await {
        if let Message::Text(text) = msg? {
            count = Some(text.trim().parse()?);
        }
    }
    count.ok_or_else(|| "no case count".into())
}

/// Runs one case: echoes until the server closes (errors are the case's verdict, not ours).
async fn run_case(client: &Client, base: &str, case: u32, agent: &str) {
    let url = format!("{base}/runCase?case={case}&agent={agent}");
    let mut ws = match client.websocket(&url).config(config()).connect().await {
        Ok(ws) => ws,
        Err(e) => {
            eprintln!("case {case}: {e}");
            return;
        }
    };
    while let Some(msg) = ws.recv().await {
        match msg {
            Ok(msg @ (Message::Text(_) | Message::Binary(_))) => {
                if ws.send(msg).await.is_err() {
                    break;
                }
            }
            Ok(_) => {}
            Err(_) => break,
        }
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let (Some(base), Some(agent)) = (args.next(), args.next()) else {
        eprintln!(
            "usage: ws_autobahn_client URL AGENT   (URL: ws://HOST:PORT of the fuzzing server)"
        );
        std::process::exit(2);
    };
    let base = base.trim_end_matches('/').to_owned();
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    rt.block_on(async {
        let client = Client::new();
        let count = case_count(&client, &base).await?;
        eprintln!("ws_autobahn_client: {count} cases");
        for case in 1..=count {
            run_case(&client, &base, case, &agent).await;
        }
        // The server writes its reports and closes (some runners without a Close frame).
        let url = format!("{base}/updateReports?agent={agent}");
        let mut ws = client.websocket(&url).connect().await?;
        while let Some(Ok(_)) = ws.recv().await {}
        Ok(())
    })
}
